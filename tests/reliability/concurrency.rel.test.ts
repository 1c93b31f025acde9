import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient, ApiResponse } from "../api/support/client.js";
import { createTenant, expectError, ik, type Tenant } from "../api/support/fixtures.js";
import { createBundle, moveBundle } from "../api/support/platform.js";
import { type Stack, useStack } from "../api/support/stack.js";

/** Clients racing for one thing at the same moment; the API tests race 5 to 20. */
const CLIENTS = 50;

const context = useStack();
let stack: Stack;
let api: ApiClient;

beforeAll(async () => {
  ({ stack, api } = context);
});

/** Fires `CLIENTS` requests at once: each is sent before any is answered. */
const race = (request: (i: number) => Promise<ApiResponse>) =>
  Promise.all(Array.from({ length: CLIENTS }, (_, i) => request(i)));

const statuses = (responses: ApiResponse[]) =>
  responses.reduce<Record<number, number>>((counts, r) => {
    counts[r.status] = (counts[r.status] ?? 0) + 1;
    return counts;
  }, {});

/** Sets one limit of a fresh environment's quotas and returns the quotas as they now are. */
async function limitQuota(tenant: Tenant, counter: string, limit: number) {
  const current = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
  const updated = await api.patch(
    `${tenant.env}/quotas`,
    { expected_revision: current.body.revision, limits: { ...current.body.limits, [counter]: limit } },
    { token: tenant.token, idempotencyKey: ik() },
  );
  expect(updated.status, updated.text).toBe(200);
  return updated.body;
}

describe(`${CLIENTS} concurrent clients`, () => {
  it("never create more subjects than the active_subjects quota, whichever imports win", async () => {
    const tenant = await createTenant(api);
    const limit = 7;
    await limitQuota(tenant, "active_subjects", limit);
    // Two new subjects per import: 100 creations compete for 7 places.
    const responses = await race((i) =>
      api.post(
        `${tenant.env}/subjects/batch`,
        {
          items: ["a", "b"].map((s) => ({
            external_id: `r${i}-${s}`,
            identity_mode: "anonymous",
            profile: {},
          })),
        },
        { token: tenant.token, idempotencyKey: ik() },
      ),
    );
    expect(statuses(responses)).toEqual({ 200: CLIENTS });
    const receipts = responses.flatMap(
      (r) => r.body.receipts as { subject_id: string; error_code: string }[],
    );
    const created = receipts.filter((r) => r.error_code === "");
    expect(created).toHaveLength(limit);
    expect(receipts.filter((r) => r.error_code === "quota_exceeded")).toHaveLength(2 * CLIENTS - limit);
    const rows = await stack.db.query<{ id: string }>("SELECT id FROM subjects WHERE environment_id = $1", [
      tenant.environmentId,
    ]);
    expect(rows.rows.map((r) => r.id).sort()).toEqual(created.map((r) => r.subject_id).sort());
    const quotas = await api.get(`${tenant.env}/quotas`, { token: tenant.token });
    expect(quotas.body.usage.active_subjects).toBe(limit);
  });

  it("never create more webhook endpoints than their quota, counted by one plane against another's limit", async () => {
    const tenant = await createTenant(api);
    const limit = 5;
    await limitQuota(tenant, "webhook_endpoints", limit);
    const responses = await race(() =>
      api.post(
        `${tenant.env}/webhooks`,
        { url: "http://127.0.0.1:9/hook", event_types: ["webhook.test"] },
        { token: tenant.token, idempotencyKey: ik() },
      ),
    );
    expect(statuses(responses)).toEqual({ 201: limit, 409: CLIENTS - limit });
    for (const refused of responses.filter((r) => r.status === 409)) {
      expect(expectError(refused, 409, "quota_exceeded").context).toEqual({
        counter: "webhook_endpoints",
        limit,
        usage: limit,
      });
    }
    const rows = await stack
      .pool("webhooks")
      .query("SELECT count(*)::int AS n FROM webhook_endpoints WHERE environment_id = $1", [
        tenant.environmentId,
      ]);
    expect(rows.rows[0].n).toBe(limit);
  });

  it("execute one Idempotency-Key once: every answer is that execution's replay or 409 in use", async () => {
    const tenant = await createTenant(api);
    const key = ik();
    const body = { slug: "raced", name: "Raced" };
    const responses = await race(() =>
      api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key }),
    );
    const executed = responses.filter(
      (r) => r.status === 201 && r.headers.get("idempotent-replayed") === null,
    );
    expect(executed, JSON.stringify(statuses(responses))).toHaveLength(1);
    const first = executed[0]!;
    for (const response of responses) {
      if (response.status === 409) {
        expectError(response, 409, "idempotency_key_in_use");
        expect(response.headers.get("retry-after")).toBe("1");
      } else {
        expect(response.status).toBe(201);
        expect(response.text).toBe(first.text);
      }
    }
    const apps = await stack.db.query("SELECT id FROM apps WHERE organization_id = $1 AND slug = $2", [
      tenant.organizationId,
      body.slug,
    ]);
    expect(apps.rows).toEqual([{ id: first.body.id }]);
    const audited = await stack.db.query(
      "SELECT count(*)::int AS n FROM audit_events WHERE resource_id = $1 AND action = 'app.created'",
      [first.body.id],
    );
    expect(audited.rows[0].n).toBe(1);
    // Once it is done, the key answers with the one execution for good.
    const later = await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key });
    expect(later.status).toBe(201);
    expect(later.text).toBe(first.text);
  });

  it("let exactly one of identical bundle moves win; the others get 409 invalid_transition", async () => {
    const tenant = await createTenant(api);
    const { bundle } = await createBundle(api, tenant, undefined, "Raced");
    for (const [from, to] of [
      ["draft", "validated"],
      ["validated", "published"],
    ] as const) {
      const moves = await race(() => moveBundle(api, tenant, bundle.id, to));
      expect(statuses(moves)).toEqual({ 200: 1, 409: CLIENTS - 1 });
      const winner = moves.find((m) => m.status === 200)!;
      expect(winner.body.status).toBe(to);
      for (const lost of moves.filter((m) => m.status === 409)) {
        expect(expectError(lost, 409, "invalid_transition").context).toMatchObject({ from: to, to });
      }
      const events = await stack
        .pool("platform")
        .query(
          "SELECT payload FROM outbox WHERE event_type = 'bundle.status_changed' AND payload->'data'->>'bundle_id' = $1 AND payload->'data'->>'to' = $2",
          [bundle.id, to],
        );
      // One move, so one event (the app has one environment) saying where it came from.
      expect(events.rows.map((r) => r.payload.data.from)).toEqual([from]);
    }
    const stored = await stack
      .pool("platform")
      .query("SELECT status, published_at FROM bundles WHERE id = $1", [bundle.id]);
    expect(stored.rows[0].status).toBe("published");
    const read = await api.get(`${tenant.app}/bundles/${bundle.id}`, { token: tenant.token });
    expect(read.body).toMatchObject({
      status: "published",
      published_at: stored.rows[0].published_at.toISOString(),
    });
  });

  it("let exactly one quota update of a revision win, and lose no update", async () => {
    const tenant = await createTenant(api);
    const initial = (await api.get(`${tenant.env}/quotas`, { token: tenant.token })).body;
    // Each client writes limits of its own, so the stored limits say whose update won.
    const responses = await race((i) =>
      api.patch(
        `${tenant.env}/quotas`,
        { expected_revision: initial.revision, limits: { ...initial.limits, programs: 1000 + i } },
        { token: tenant.token, idempotencyKey: ik() },
      ),
    );
    expect(statuses(responses)).toEqual({ 200: 1, 409: CLIENTS - 1 });
    const winner = responses.find((r) => r.status === 200)!;
    expect(winner.body.revision).toBe(initial.revision + 1);
    for (const lost of responses.filter((r) => r.status === 409)) {
      expect(expectError(lost, 409, "revision_conflict").context).toEqual({
        expected_revision: initial.revision,
        current_revision: initial.revision + 1,
      });
    }
    const final = (await api.get(`${tenant.env}/quotas`, { token: tenant.token })).body;
    expect(final.revision).toBe(initial.revision + 1);
    expect(final.limits).toEqual(winner.body.limits);
    const stored = await stack.db.query("SELECT revision, programs FROM quotas WHERE environment_id = $1", [
      tenant.environmentId,
    ]);
    expect(stored.rows).toEqual([{ revision: initial.revision + 1, programs: winner.body.limits.programs }]);
    const events = await stack.db.query(
      "SELECT payload FROM outbox WHERE event_type = 'quota.updated' AND environment_id = $1",
      [tenant.environmentId],
    );
    expect(events.rows.map((r) => r.payload.data)).toEqual([
      { environment_id: tenant.environmentId, revision: initial.revision + 1, limits: winner.body.limits },
    ]);
  });
});
