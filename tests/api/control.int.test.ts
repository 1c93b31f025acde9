import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, signUp, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
});

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("apps", () => {
  it("creates an app (201 Application) and reads it back by id (#4)", async () => {
    const created = await api.post(
      `${tenant.org}/apps`,
      { slug: "intake", name: "Intake", description: "Onboarding survey" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      organization_id: tenant.organizationId,
      slug: "intake",
      name: "Intake",
      description: "Onboarding survey",
      created_at: expect.stringMatching(TIMESTAMP),
    });
    const read = await api.get(`${tenant.org}/apps/${created.body.id}`, { token: tenant.token });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);
  });

  it("answers 409 already_exists for a slug taken in the organization", async () => {
    const body = { slug: "dupe", name: "One" };
    expect(
      (await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: ik() })).status,
    ).toBe(201);
    const again = await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: ik() });
    expect(expectError(again, 409, "already_exists").context).toMatchObject({ field: "slug" });
  });

  it("validates the slug pattern and reports it with its pattern", async () => {
    const response = await api.post(
      `${tenant.org}/apps`,
      { slug: "Bad_Slug", name: "" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(response.status).toBe(422);
    expect(response.body.detail).toEqual([
      {
        type: "string_pattern_mismatch",
        loc: ["body", "slug"],
        msg: "String should match pattern '^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$'",
        input: "Bad_Slug",
        ctx: { pattern: "^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$" },
      },
      {
        type: "string_too_short",
        loc: ["body", "name"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
    ]);
  });

  it("answers 404 for an app of another organization and for a malformed id", async () => {
    const other = await createTenant(api);
    expectError(
      await api.get(`${tenant.org}/apps/${other.appId}`, { token: tenant.token }),
      404,
      "not_found",
    );
    expectError(await api.get(`${other.app}`, { token: tenant.token }), 404, "not_found");
    expectError(await api.get(`${tenant.org}/apps/not-a-uuid`, { token: tenant.token }), 404, "not_found");
    expectError(
      await api.get("/v1/organizations/not-a-uuid/apps", { token: tenant.token }),
      404,
      "not_found",
    );
  });
});

describe("cursor paging (docs/paging.md)", () => {
  it("pages newest first with no repeats and no gaps while items are inserted between pages", async () => {
    const owner = await signUp(api, "Paging");
    const org = `/v1/organizations/${owner.organizationId}`;
    const create = (slug: string) =>
      api.post(`${org}/apps`, { slug, name: slug }, { token: owner.token, idempotencyKey: ik() });
    const initial: string[] = [];
    for (let i = 0; i < 7; i++) initial.push((await create(`before-${i}`)).body.id);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : "?limit=3";
      const page = await api.get(`${org}/apps${query}`, { token: owner.token });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.items.map((item: { id: string }) => item.id));
      cursor = page.body.next_cursor;
      pages += 1;
      // Concurrent inserts land before the first page and must not shift later pages.
      await Promise.all([create(`during-${pages}-a`), create(`during-${pages}-b`)]);
    } while (cursor !== null);

    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...initial].reverse());
  });

  it("defaults to 50 items and rejects limits and cursors out of range", async () => {
    const bad = await api.get(`${tenant.org}/apps?limit=0&cursor=`, { token: tenant.token });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toEqual([
      {
        type: "greater_than_equal",
        loc: ["query", "limit"],
        msg: "Input should be greater than or equal to 1",
        input: "0",
        ctx: { ge: 1 },
      },
      {
        type: "string_too_short",
        loc: ["query", "cursor"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
    ]);
    const notInt = await api.get(`${tenant.org}/apps?limit=ten`, { token: tenant.token });
    expect(notInt.body.detail[0]).toMatchObject({
      type: "int_parsing",
      loc: ["query", "limit"],
      input: "ten",
    });
    const tooMany = await api.get(`${tenant.org}/apps?limit=101`, { token: tenant.token });
    expect(tooMany.body.detail[0]).toMatchObject({ type: "less_than_equal", ctx: { le: 100 } });
  });

  it("answers 422 value_error for a cursor the service did not issue", async () => {
    const forged = Buffer.from(JSON.stringify(["2026-01-01T00:00:00.000Z", tenant.appId])).toString(
      "base64url",
    );
    for (const cursor of ["garbage", `${forged}.AAAAAAAAAAAAAAAAAAAAAA`]) {
      const response = await api.get(`${tenant.org}/apps?cursor=${cursor}`, { token: tenant.token });
      expect(response.status).toBe(422);
      expect(response.body.detail).toEqual([
        expect.objectContaining({ type: "value_error", loc: ["query", "cursor"], input: cursor }),
      ]);
    }
    // A cursor issued for one list is not accepted by another.
    const owner = await signUp(api);
    const org = `/v1/organizations/${owner.organizationId}`;
    for (const slug of ["a", "b"])
      await api.post(`${org}/apps`, { slug, name: slug }, { token: owner.token, idempotencyKey: ik() });
    const first = await api.get(`${org}/apps?limit=1`, { token: owner.token });
    const elsewhere = await api.get(`${tenant.app}/environments?cursor=${first.body.next_cursor}`, {
      token: tenant.token,
    });
    expect(elsewhere.status).toBe(422);
  });
});

describe("environments", () => {
  it("creates an environment with its quotas and lists it", async () => {
    const created = await api.post(
      `${tenant.app}/environments`,
      { slug: "staging", name: "Staging" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      app_id: tenant.appId,
      slug: "staging",
      name: "Staging",
      created_at: expect.stringMatching(TIMESTAMP),
    });
    const quota = await stack.db.query(
      "SELECT revision, schema_version, programs FROM quotas WHERE environment_id = $1",
      [created.body.id],
    );
    expect(quota.rows).toEqual([{ revision: 1, schema_version: 1, programs: 100 }]);
    const list = await api.get(`${tenant.app}/environments`, { token: tenant.token });
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { id: string }) => e.id)).toEqual([created.body.id, tenant.environmentId]);
    expect(list.body.next_cursor).toBeNull();
  });

  it("answers 409 for a slug taken in the app", async () => {
    const again = await api.post(
      `${tenant.app}/environments`,
      { slug: "production", name: "Again" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(again, 409, "already_exists");
  });
});

describe("API keys", () => {
  it("issues a key shown once, which then authenticates by bearer and by X-API-Key", async () => {
    const key = await createKey(api, tenant, ["org:read", "apps:write"], "ci");
    expect(key.body).toEqual({
      id: expect.any(String),
      environment_id: tenant.environmentId,
      name: "ci",
      key_prefix: expect.stringMatching(/^evk_[0-9A-Za-z]{8}$/),
      scopes: ["org:read", "apps:write"],
      created_at: expect.stringMatching(TIMESTAMP),
      revoked_at: null,
      secret: expect.stringMatching(/^evk_[0-9A-Za-z]{8}_[0-9A-Za-z]{32}$/),
    });
    expect(key.secret.startsWith(`${key.body.key_prefix}_`)).toBe(true);
    // Only the hash is stored.
    const stored = await stack.db.query("SELECT secret_hash FROM api_keys WHERE id = $1", [key.id]);
    expect(stored.rows[0].secret_hash).toEqual(createHash("sha256").update(key.secret).digest());

    const principal = await api.get("/v1/auth/principal", { token: key.secret });
    expect(principal.body).toEqual({
      kind: "api_key",
      principal_id: key.id,
      scopes: ["org:read", "apps:write"],
      api_key_name: "ci",
      email: null,
    });
    expect((await api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);

    const list = await api.get(`${tenant.env}/api-keys`, { token: tenant.token });
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(key.secret);
    expect(list.body.items[0]).toEqual({ ...key.body, secret: undefined });
    expect(Object.keys(list.body.items[0])).not.toContain("secret");
  });

  it("answers 403 forbidden with the required scope when a key lacks it", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    const denied = await api.post(
      `${tenant.org}/apps`,
      { slug: "nope", name: "Nope" },
      { token: key.secret, idempotencyKey: ik() },
    );
    expect(expectError(denied, 403, "forbidden").context).toEqual({ required_scope: "apps:write" });
    expectError(await api.get(`${tenant.env}/api-keys`, { token: key.secret }), 403, "forbidden");
    // Session-only endpoints refuse keys.
    expectError(await api.post("/v1/organizations", { name: "X" }, { token: key.secret }), 403, "forbidden");
  });

  it("reaches its own environment only: 403 for another app or environment, 404 for another organization", async () => {
    const key = await createKey(api, tenant, ["org:read", "keys:write"]);
    const sibling = await api.post(
      `${tenant.org}/apps`,
      { slug: "sibling", name: "Sibling" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(
      await api.get(`${tenant.org}/apps/${sibling.body.id}`, { token: key.secret }),
      403,
      "forbidden",
    );
    const staging = await api.post(
      `${tenant.app}/environments`,
      { slug: "qa", name: "QA" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expectError(
      await api.get(`${tenant.app}/environments/${staging.body.id}/api-keys`, { token: key.secret }),
      403,
      "forbidden",
    );
    const other = await createTenant(api);
    expectError(await api.get(other.org, { token: key.secret }), 404, "not_found");
    expectError(await api.get(`${other.env}/api-keys`, { token: key.secret }), 404, "not_found");
    expect((await api.get(`${tenant.env}/api-keys`, { token: key.secret })).status).toBe(200);
  });

  it("refuses scopes the creator lacks (403) and interviews:agent with others (422)", async () => {
    const limited = await createKey(api, tenant, ["keys:write"]);
    const widen = await api.post(
      `${tenant.env}/api-keys`,
      { name: "wide", scopes: ["keys:write", "apps:write"] },
      { token: limited.secret, idempotencyKey: ik() },
    );
    expect(expectError(widen, 403, "forbidden").context).toEqual({ required_scope: "apps:write" });
    const agent = await api.post(
      `${tenant.env}/api-keys`,
      { name: "agent", scopes: ["interviews:agent", "org:read"] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(agent.status).toBe(422);
    expect(agent.body.detail).toEqual([
      expect.objectContaining({
        type: "value_error",
        loc: ["body", "scopes"],
        input: ["interviews:agent", "org:read"],
      }),
    ]);
    const unknown = await api.post(
      `${tenant.env}/api-keys`,
      { name: "x", scopes: ["root"] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(unknown.body.detail[0]).toMatchObject({
      type: "enum",
      loc: ["body", "scopes", "0"],
      input: "root",
    });
    const none = await api.post(
      `${tenant.env}/api-keys`,
      { name: "x", scopes: [] },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(none.body.detail[0]).toEqual({
      type: "too_short",
      loc: ["body", "scopes"],
      msg: "List should have at least 1 item after validation, not 0",
      input: [],
      ctx: { field_type: "List", min_length: 1, actual_length: 0 },
    });
  });

  it("revokes a key: 200 summary with revoked_at, then 401 api_key_revoked", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    const revoked = await api.post(`${tenant.env}/api-keys/${key.id}/revoke`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: key.id, revoked_at: expect.stringMatching(TIMESTAMP) });
    expectError(await api.get(tenant.org, { token: key.secret }), 401, "api_key_revoked");
    expectError(await api.get(tenant.org, { apiKey: key.secret }), 401, "api_key_revoked");
    const unknown = await api.post(`${tenant.env}/api-keys/${tenant.appId}/revoke`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expectError(unknown, 404, "not_found");
  });
});
