import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

const item = (external_id: string, profile: Record<string, unknown> = {}) => ({
  external_id,
  identity_mode: "enterprise_managed",
  profile,
});

/** A fresh tenant whose environment admits `quota` active subjects. */
async function tenantAdmitting(quota: number): Promise<Tenant> {
  const fresh = await createTenant(api);
  const current = await api.get(`${fresh.env}/quotas`, { token: fresh.token });
  const updated = await api.patch(
    `${fresh.env}/quotas`,
    { expected_revision: current.body.revision, limits: { ...current.body.limits, active_subjects: quota } },
    { token: fresh.token, idempotencyKey: ik() },
  );
  expect(updated.status, updated.text).toBe(200);
  return fresh;
}

/** The environment holds `count` subjects, as its rows and its quota's usage both say. */
async function expectSubjects(fresh: Tenant, count: number): Promise<void> {
  const counted = await stack.db.query("SELECT count(*)::int AS n FROM subjects WHERE environment_id = $1", [
    fresh.environmentId,
  ]);
  expect(counted.rows[0].n).toBe(count);
  const usage = await api.get(`${fresh.env}/quotas`, { token: fresh.token });
  expect(usage.body.usage.active_subjects).toBe(count);
}

describe("POST ENV/subjects/batch (#5)", () => {
  it("upserts by external_id with a receipt per item, and reads a subject back", async () => {
    const first = await api.post(
      `${tenant.env}/subjects/batch`,
      { items: [item("emp-1", { team: "red" }), item("emp-2"), item("emp-1", { team: "blue" })] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      batch_id: expect.any(String),
      idempotent_replay: false,
      receipts: [
        { item_index: 0, subject_id: expect.any(String), error_code: "" },
        { item_index: 1, subject_id: expect.any(String), error_code: "" },
        { item_index: 2, subject_id: "", error_code: "duplicate_in_batch" },
      ],
    });
    const emp1 = first.body.receipts[0].subject_id;

    const second = await api.post(
      `${tenant.env}/subjects/batch`,
      { items: [item("emp-1", { team: "green" })] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(second.body.receipts[0].subject_id).toBe(emp1);
    expect(second.body.batch_id).not.toBe(first.body.batch_id);

    const subject = await api.get(`${tenant.env}/subjects/${emp1}`, { token: tenant.token });
    expect(subject.status).toBe(200);
    expect(subject.body).toEqual({
      id: emp1,
      environment_id: tenant.environmentId,
      external_id: "emp-1",
      identity_mode: "enterprise_managed",
      profile: { team: "green" },
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const events = await stack.db.query(
      "SELECT payload FROM outbox WHERE event_type = 'subject.imported' ORDER BY created_at",
    );
    expect(events.rows[0].payload.data).toMatchObject({
      batch_id: first.body.batch_id,
      imported: 2,
      failed: 1,
    });
  });

  it("replays with the same Idempotency-Key: same body, idempotent_replay true", async () => {
    const key = ik();
    const body = { items: [item("replay-1")] };
    const first = await api.post(`${tenant.env}/subjects/batch`, body, {
      token: tenant.token,
      idempotencyKey: key,
    });
    const again = await api.post(`${tenant.env}/subjects/batch`, body, {
      token: tenant.token,
      idempotencyKey: key,
    });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ ...first.body, idempotent_replay: true });
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });

  it("validates every item and reports each problem with its index", async () => {
    const bad = await api.post(
      `${tenant.env}/subjects/batch`,
      { items: [item("ok"), { external_id: "", identity_mode: "robot", profile: [] }] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: { loc: string[]; type: string }) => [d.loc.join("."), d.type])).toEqual([
      ["body.items.1.external_id", "string_too_short"],
      ["body.items.1.identity_mode", "enum"],
      ["body.items.1.profile", "dict_type"],
    ]);
    const tooMany = await api.post(
      `${tenant.env}/subjects/batch`,
      { items: Array.from({ length: 101 }, (_, i) => item(`x${i}`)) },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(tooMany.body.detail[0]).toMatchObject({
      type: "too_long",
      loc: ["body", "items"],
      ctx: { field_type: "List", max_length: 100, actual_length: 101 },
    });
  });

  it("never lets 20 concurrent imports create more subjects than the quota", async () => {
    const quota = 7;
    const fresh = await tenantAdmitting(quota);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post(
          `${fresh.env}/subjects/batch`,
          { items: [item(`c${i}-a`), item(`c${i}-b`)] },
          { token: fresh.token, idempotencyKey: ik() },
        ),
      ),
    );
    const receipts = responses.flatMap(
      (response) => response.body.receipts as { subject_id: string; error_code: string }[],
    );
    expect(receipts.filter((r) => r.error_code === "").length).toBe(quota);
    expect(receipts.filter((r) => r.error_code === "quota_exceeded").length).toBe(40 - quota);
    await expectSubjects(fresh, quota);
    // Updating a known subject needs no quota, even with the quota used up.
    const index = responses.findIndex((response) => response.body.receipts[0].error_code === "");
    const known = responses[index]?.body.receipts[0].subject_id;
    const update = await api.post(
      `${fresh.env}/subjects/batch`,
      { items: [item(`c${index}-a`, { v: 2 })] },
      { token: fresh.token, idempotencyKey: ik() },
    );
    expect(update.body.receipts).toEqual([{ item_index: 0, subject_id: known, error_code: "" }]);
  });

  it("holds a quota far above a batch exactly while concurrent imports run side by side below it", async () => {
    // Imports run side by side while the count leaves 7 × 100 below the limit, then one at a time.
    const quota = 900;
    const fresh = await tenantAdmitting(quota);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post(
          `${fresh.env}/subjects/batch`,
          { items: Array.from({ length: 50 }, (_, j) => item(`f${i}-${j}`)) },
          { token: fresh.token, idempotencyKey: ik() },
        ),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    const receipts = responses.flatMap(
      (response) => response.body.receipts as { subject_id: string; error_code: string }[],
    );
    expect(receipts.filter((r) => r.error_code === "").length).toBe(quota);
    expect(receipts.filter((r) => r.error_code === "quota_exceeded").length).toBe(1_000 - quota);
    await expectSubjects(fresh, quota);
  });

  it("answers every one of concurrent imports bringing the same new external_ids in opposite orders", async () => {
    const fresh = await createTenant(api);
    const ids = Array.from({ length: 20 }, (_, j) => `both-${j}`);
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api.post(
          `${fresh.env}/subjects/batch`,
          { items: (i % 2 ? [...ids].reverse() : ids).map((id) => item(id, { from: i })) },
          { token: fresh.token, idempotencyKey: ik() },
        ),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    // Each external id made one subject, which every import answers.
    const byId = new Map<string, Set<string>>();
    for (const [i, response] of responses.entries()) {
      const order = i % 2 ? [...ids].reverse() : ids;
      for (const receipt of response.body.receipts as { item_index: number; subject_id: string }[]) {
        const id = order[receipt.item_index] as string;
        byId.set(id, (byId.get(id) ?? new Set()).add(receipt.subject_id));
      }
    }
    expect([...byId.values()].map((made) => made.size)).toEqual(ids.map(() => 1));
    await expectSubjects(fresh, ids.length);
  });

  it("creates one subject when concurrent imports bring the same new external_id, each with its audit and event", async () => {
    const fresh = await createTenant(api);
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api.post(
          `${fresh.env}/subjects/batch`,
          { items: [item("shared", { from: i }), item(`own-${i}`)] },
          { token: fresh.token, idempotencyKey: ik() },
        ),
      ),
    );
    expect(responses.map((response) => response.status)).toEqual(responses.map(() => 200));
    const shared = new Set(responses.map((response) => response.body.receipts[0].subject_id));
    expect(shared.size).toBe(1);
    expect(responses.every((response) => response.body.receipts[1].error_code === "")).toBe(true);
    await expectSubjects(fresh, 13);
    // Every import wrote its audit record and its event once, whichever way it was written.
    const batches = responses.map((response) => response.body.batch_id).sort();
    const audited = await stack.db.query<{ resource_id: string }>(
      "SELECT resource_id FROM audit_events WHERE environment_id = $1 AND action = 'subjects.imported'",
      [fresh.environmentId],
    );
    expect(audited.rows.map((row) => row.resource_id).sort()).toEqual(batches);
    const events = await stack.db.query<{ batch_id: string }>(
      "SELECT payload->'data'->>'batch_id' AS batch_id FROM outbox WHERE environment_id = $1 AND event_type = 'subject.imported'",
      [fresh.environmentId],
    );
    expect(events.rows.map((row) => row.batch_id).sort()).toEqual(batches);
  });

  it("answers 404 for a subject of another environment or a malformed id", async () => {
    const other = await createTenant(api);
    const created = await api.post(
      `${other.env}/subjects/batch`,
      { items: [item("o-1")] },
      { token: other.token, idempotencyKey: ik() },
    );
    const id = created.body.receipts[0].subject_id;
    expectError(await api.get(`${tenant.env}/subjects/${id}`, { token: tenant.token }), 404, "not_found");
    expectError(
      await api.get(`${tenant.env}/subjects/not-a-uuid`, { token: tenant.token }),
      404,
      "not_found",
    );
  });
});

describe("programs", () => {
  it("creates and lists programs", async () => {
    const created = await api.post(
      `${tenant.env}/programs`,
      { name: "Onboarding 2026" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      environment_id: tenant.environmentId,
      name: "Onboarding 2026",
      created_at: expect.any(String),
    });
    const list = await api.get(`${tenant.env}/programs`, { token: tenant.token });
    expect(list.body).toEqual({ items: [created.body], next_cursor: null });
  });
});
