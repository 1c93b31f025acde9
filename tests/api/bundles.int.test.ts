import { createHash } from "node:crypto";
import { sampleContents } from "@evalp/testing";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { createBundle, createTemplate, FIELDS, moveBundle } from "./support/platform.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

describe("POST APP/bundles", () => {
  it("creates a draft whose fingerprint hashes the six content hashes in field order", async () => {
    const { template, ids } = await createTemplate(api, tenant);
    const body = Object.fromEntries(
      Object.entries(FIELDS).map(([kind, field]) => [field, ids[kind as keyof typeof ids]]),
    );
    const created = await api.post(
      `${tenant.app}/bundles`,
      { name: "Fingerprinted", ...body },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    const hashes = Object.keys(FIELDS).map(
      (kind) =>
        template.definitions.find((d: { content: { kind: string } }) => d.content.kind === kind).content_hash,
    );
    expect(created.body).toEqual({
      id: expect.any(String),
      app_id: tenant.appId,
      name: "Fingerprinted",
      status: "draft",
      fingerprint: `sha256:${createHash("sha256").update(hashes.join("\n")).digest("hex")}`,
      revision: 1,
      ...body,
      created_at: expect.any(String),
      created_by_user_id: expect.any(String),
    });
    const again = await api.post(
      `${tenant.app}/bundles`,
      { name: "Fingerprinted", ...body },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(again.body.revision).toBe(2);
    expect(again.body.fingerprint).toBe(created.body.fingerprint);
    expect((await api.get(`${tenant.app}/bundles/${created.body.id}`, { token: tenant.token })).body).toEqual(
      created.body,
    );
  });

  it("refuses a definition of another kind (422 component_kind_mismatch) or another app (404 with the field)", async () => {
    const { ids } = await createTemplate(api, tenant);
    const body = Object.fromEntries(
      Object.entries(FIELDS).map(([kind, field]) => [field, ids[kind as keyof typeof ids]]),
    );
    const swapped = await api.post(
      `${tenant.app}/bundles`,
      { name: "Swapped", ...body, context_version_id: ids.guardrail },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(swapped, 422, "component_kind_mismatch").context).toMatchObject({
      field: "context_version_id",
    });
    const other = await createTenant(api);
    const foreign = await createTemplate(api, other);
    const stolen = await api.post(
      `${tenant.app}/bundles`,
      { name: "Stolen", ...body, experience_version_id: foreign.ids.experience },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(expectError(stolen, 404, "not_found").context).toMatchObject({ field: "experience_version_id" });
    const missing = await api.post(
      `${tenant.app}/bundles`,
      { name: "Partial" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(missing.body.detail).toHaveLength(6);
  });
});

describe("POST APP/bundles/{id}/status (#9)", () => {
  it("follows the transition table, publishes once, and emits bundle.status_changed into every environment", async () => {
    const owner = await createTenant(api);
    await api.post(
      `${owner.app}/environments`,
      { slug: "staging", name: "Staging" },
      { token: owner.token, idempotencyKey: ik() },
    );
    const { bundle } = await createBundle(api, owner);
    const validated = await moveBundle(api, owner, bundle.id, "validated");
    expect(validated.status).toBe(200);
    expect(validated.body.status).toBe("validated");
    const published = await moveBundle(api, owner, bundle.id, "published");
    expect(published.body.status).toBe("published");
    expect(published.body.published_at).toEqual(expect.any(String));
    const deprecated = await moveBundle(api, owner, bundle.id, "deprecated");
    const republished = await moveBundle(api, owner, bundle.id, "published");
    expect(deprecated.body.status).toBe("deprecated");
    expect(republished.body.published_at).toBe(published.body.published_at);

    const refused = await moveBundle(api, owner, bundle.id, "draft");
    expect(expectError(refused, 409, "invalid_transition").context).toEqual({
      from: "published",
      to: "draft",
      allowed: ["deprecated"],
    });
    const same = await moveBundle(api, owner, bundle.id, "published");
    expectError(same, 409, "invalid_transition");

    const events = await stack
      .pool("platform")
      .query(
        "SELECT environment_id, payload FROM outbox WHERE event_type = 'bundle.status_changed' ORDER BY created_at",
      );
    const forBundle = events.rows.filter((row) => row.payload.data.bundle_id === bundle.id);
    // Four moves into two environments.
    expect(forBundle).toHaveLength(8);
    expect(new Set(forBundle.map((row) => row.environment_id)).size).toBe(2);
    expect(forBundle[0].payload.data).toMatchObject({
      from: "draft",
      to: "validated",
      name: "Intake",
      revision: 1,
    });
  });

  it("validates all six contents on the way to validated, reporting every problem (422 bundle_invalid)", async () => {
    const contents = sampleContents();
    (contents.scorecard.axes[1]!.expr as Record<string, unknown>).op = "variable";
    contents.experience.sections[0]!.questions[1]!.options = [];
    contents.report_template.sections[0]!.axes.push("charisma");
    const { bundle } = await createBundle(api, tenant, contents, "Broken");
    const refused = await moveBundle(api, tenant, bundle.id, "validated");
    const detail = expectError(refused, 422, "bundle_invalid");
    expect(
      (detail.context.errors as { component: string; path: string }[]).map((e) => `${e.component}${e.path}`),
    ).toEqual([
      "experience/sections/0/questions/1/options",
      "scorecard/axes/1/expr",
      "report_template/sections/0/axes/2",
    ]);
    expect((await api.get(`${tenant.app}/bundles/${bundle.id}`, { token: tenant.token })).body.status).toBe(
      "draft",
    );
  });

  it("lets exactly one of concurrent identical moves win", async () => {
    const { bundle } = await createBundle(api, tenant, undefined, "Raced");
    const moves = await Promise.all(
      [1, 2, 3, 4, 5].map(() => moveBundle(api, tenant, bundle.id, "validated")),
    );
    expect(moves.filter((move) => move.status === 200)).toHaveLength(1);
    for (const move of moves.filter((m) => m.status !== 200)) {
      expect(expectError(move, 409, "invalid_transition").context).toMatchObject({
        from: "validated",
        to: "validated",
      });
    }
  });
});

describe("GET APP/bundles (#8)", () => {
  it("pages newest first and filters by status", async () => {
    const owner = await createTenant(api);
    const made = [];
    for (let i = 0; i < 3; i++) made.push((await createBundle(api, owner, undefined, `B${i}`)).bundle);
    await moveBundle(api, owner, made[1].id, "archived");
    const page = await api.get(`${owner.app}/bundles?limit=2`, { token: owner.token });
    expect(page.body.items.map((b: { id: string }) => b.id)).toEqual([made[2].id, made[1].id]);
    expect(page.body.items[1].status).toBe("archived");
    const rest = await api.get(`${owner.app}/bundles?limit=2&cursor=${page.body.next_cursor}`, {
      token: owner.token,
    });
    expect(rest.body).toEqual({ items: [expect.objectContaining({ id: made[0].id })], next_cursor: null });
    const archived = await api.get(`${owner.app}/bundles?status=archived`, { token: owner.token });
    expect(archived.body.items.map((b: { id: string }) => b.id)).toEqual([made[1].id]);
    const bad = await api.get(`${owner.app}/bundles?status=gone&limit=500`, { token: owner.token });
    expect(
      bad.body.detail.map((d: { loc: string[]; type: string }) => `${d.loc.join(".")}:${d.type}`),
    ).toEqual(["query.limit:less_than_equal", "query.status:enum"]);
  });
});

describe("POST APP/bundles/{id}/preview (#10)", () => {
  it("runs the scorecard with the context defaults and lays the report out by the template", async () => {
    const { bundle } = await createBundle(api, tenant, undefined, "Previewed");
    const preview = await api.post(
      `${tenant.app}/bundles/${bundle.id}/preview`,
      {
        answers: { q1: { value: 4 }, q3: { value: 2 } },
        context: { region: "us" },
        respondent_id: "r-1",
        signals: {},
      },
      { token: tenant.token },
    );
    expect(preview.status).toBe(200);
    const experience = {
      axis: "experience",
      label: "Experience",
      score: 40,
      band_id: "senior",
      band_label: "Senior",
    };
    const skill = { axis: "skill", label: "Skill", score: 2, band_id: "low", band_label: "Low" };
    expect(preview.body.report).toEqual({
      bundle_id: bundle.id,
      fingerprint: bundle.fingerprint,
      respondent_id: "r-1",
      axes: [experience, skill],
      title: "Candidate report",
      sections: [{ id: "summary", title: "Summary", axes: [experience, skill] }],
    });
    expect(preview.body.trace.axes.experience).toEqual([
      { path: "/args/0", op: "var", value: 4 },
      { path: "/args/1", op: "lit", value: 10 },
      { path: "", op: "calc", fn: "mul", value: 40 },
    ]);
    // Preview writes nothing.
    const events = await stack.pool("platform").query("SELECT count(*)::int AS n FROM outbox");
    const before = events.rows[0].n;
    await api.post(
      `${tenant.app}/bundles/${bundle.id}/preview`,
      { answers: {}, context: {}, respondent_id: "r", signals: {} },
      { token: tenant.token },
    );
    expect((await stack.pool("platform").query("SELECT count(*)::int AS n FROM outbox")).rows[0].n).toBe(
      before,
    );
  });

  it("scores null for missing answers and type errors, and marks the trace", async () => {
    const { bundle } = await createBundle(api, tenant, undefined, "Nulls");
    const preview = await api.post(
      `${tenant.app}/bundles/${bundle.id}/preview`,
      { answers: { q1: { value: "four" } }, context: {}, respondent_id: "r-2", signals: {} },
      { token: tenant.token },
    );
    expect(preview.body.report.axes).toEqual([
      { axis: "experience", label: "Experience", score: null, band_id: null, band_label: null },
      { axis: "skill", label: "Skill", score: null, band_id: null, band_label: null },
    ]);
    expect(preview.body.trace.axes.experience.at(-1)).toEqual({
      path: "",
      op: "calc",
      fn: "mul",
      value: null,
      error: "type_error",
    });
  });

  it("answers 422 expression_invalid for a malformed scorecard and 409 for an archived bundle", async () => {
    const contents = sampleContents();
    (contents.scorecard.axes[0]!.expr as { args: Record<string, unknown>[] }).args[1]!.extra = true;
    const { bundle } = await createBundle(api, tenant, contents, "Malformed");
    const invalid = await api.post(
      `${tenant.app}/bundles/${bundle.id}/preview`,
      { answers: {}, context: {}, respondent_id: "r", signals: {} },
      { token: tenant.token },
    );
    expect(expectError(invalid, 422, "expression_invalid").context).toMatchObject({
      path: "/axes/0/expr/args/1",
    });
    await moveBundle(api, tenant, bundle.id, "archived");
    const archived = await api.post(
      `${tenant.app}/bundles/${bundle.id}/preview`,
      { answers: {}, context: {}, respondent_id: "r", signals: {} },
      { token: tenant.token },
    );
    expectError(archived, 409, "invalid_transition");
  });

  it("needs bundles:read, and bundles:write to move", async () => {
    const { bundle } = await createBundle(api, tenant, undefined, "Scoped");
    const reader = await createKey(api, tenant, ["bundles:read"]);
    const preview = await api.post(
      `${tenant.app}/bundles/${bundle.id}/preview`,
      { answers: {}, context: {}, respondent_id: "r", signals: {} },
      { token: reader.secret },
    );
    expect(preview.status).toBe(200);
    const move = await api.post(
      `${tenant.app}/bundles/${bundle.id}/status`,
      { status: "validated" },
      { token: reader.secret, idempotencyKey: ik() },
    );
    expect(expectError(move, 403, "forbidden").context).toEqual({ required_scope: "bundles:write" });
  });
});
