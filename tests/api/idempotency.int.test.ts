import { idempotencyId, operatorScope, redisKeys } from "@evalp/gateway";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, useStack } from "./support/stack.js";

const context = useStack();
let stack: Stack;
let api: ApiClient;
let tenant: Tenant;
/** The tenant's user, as the gateway scopes its keys. */
let userScope: string;

beforeAll(async () => {
  ({ stack, api } = context);
  tenant = await createTenant(api);
  const principal = await api.get("/v1/auth/principal", { token: tenant.token });
  userScope = operatorScope(principal.body.kind, principal.body.principal_id, tenant.organizationId);
});

/** The Redis keys of an Idempotency-Key sent on `POST ORG/apps` by the tenant: its lock and its record. */
function appKeys(key: string) {
  const id = idempotencyId(userScope, "POST", "/v1/organizations/:organization_id/apps", key);
  const keys = redisKeys(stack.config.REDIS_KEY_PREFIX);
  return { lock: keys.idempotencyLock(id), record: keys.idempotencyRecord(id) };
}

/** `POST ORG/apps` as the tenant, under an Idempotency-Key. */
const postApp = (slug: string, key: string) =>
  api.post(`${tenant.org}/apps`, { slug, name: slug }, { token: tenant.token, idempotencyKey: key });

/** `POST ORG/apps` with a body that is not a JSON app, under an Idempotency-Key. */
const postRawApp = (key: string, contentType: string, raw: string) =>
  api.post(`${tenant.org}/apps`, undefined, {
    token: tenant.token,
    idempotencyKey: key,
    raw,
    headers: { "content-type": contentType },
  });

const appCount = async (slug: string) =>
  (await stack.db.query("SELECT count(*)::int AS n FROM apps WHERE slug = $1", [slug])).rows[0].n as number;

describe("Idempotency-Key (docs/idempotency.md)", () => {
  it("is required on org-scoped mutations: 422 at header Idempotency-Key, reported with body problems", async () => {
    const missing = await api.post(`${tenant.org}/apps`, { slug: "x" }, { token: tenant.token });
    expect(missing.status).toBe(422);
    expect(missing.body.detail).toEqual([
      { type: "missing", loc: ["header", "Idempotency-Key"], msg: "Field required", input: null, ctx: {} },
      { type: "missing", loc: ["body", "name"], msg: "Field required", input: { slug: "x" }, ctx: {} },
    ]);
    const tooLong = await api.post(
      `${tenant.org}/apps`,
      { slug: "x", name: "X" },
      { token: tenant.token, idempotencyKey: "k".repeat(256) },
    );
    expect(tooLong.body.detail).toEqual([
      expect.objectContaining({
        type: "string_too_long",
        loc: ["header", "Idempotency-Key"],
        ctx: { max_length: 255 },
      }),
    ]);
    expect(await appCount("x")).toBe(0);
  });

  it("replays the stored response verbatim with Idempotent-Replayed, executing once", async () => {
    const key = ik();
    const body = { slug: "replayed", name: "Replayed" };
    const first = await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const second = await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key });
    expect(second.status).toBe(201);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("idempotent-replayed")).toBe("true");
    expect(second.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    expect(await appCount("replayed")).toBe(1);
  });

  it("replays an error with the first request's request_id, and 422 idempotency_key_reused for another request", async () => {
    const key = ik();
    const taken = { slug: "replayed-error", name: "One" };
    await api.post(`${tenant.org}/apps`, taken, { token: tenant.token, idempotencyKey: ik() });
    const first = await api.post(`${tenant.org}/apps`, taken, { token: tenant.token, idempotencyKey: key });
    expectError(first, 409, "already_exists");
    const second = await api.post(`${tenant.org}/apps`, taken, { token: tenant.token, idempotencyKey: key });
    expect(second.status).toBe(409);
    expect(second.body.detail.request_id).toBe(first.body.detail.request_id);
    expect(second.headers.get("x-request-id")).not.toBe(first.body.detail.request_id);
    expect(second.headers.get("idempotent-replayed")).toBe("true");

    const reused = await api.post(
      `${tenant.org}/apps`,
      { slug: "different", name: "Two" },
      { token: tenant.token, idempotencyKey: key },
    );
    expectError(reused, 422, "idempotency_key_reused");
    expect(await appCount("different")).toBe(0);
  });

  it("scopes keys to the route: the same key on another route executes there", async () => {
    const key = ik();
    const app = await api.post(
      `${tenant.org}/apps`,
      { slug: "scoped", name: "Scoped" },
      { token: tenant.token, idempotencyKey: key },
    );
    expect(app.status).toBe(201);
    const env = await api.post(
      `${tenant.app}/environments`,
      { slug: "scoped", name: "Scoped" },
      { token: tenant.token, idempotencyKey: key },
    );
    expect(env.status).toBe(201);
    expect(env.headers.get("idempotent-replayed")).toBeNull();
  });

  it("never executes two concurrent requests with one key: one runs, the others get 409 or its replay", async () => {
    const key = ik();
    const body = { slug: "concurrent", name: "Concurrent" };
    const responses = await Promise.all(
      Array.from({ length: 12 }, () =>
        api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key }),
      ),
    );
    const executed = responses.filter(
      (r) => r.status === 201 && r.headers.get("idempotent-replayed") === null,
    );
    expect(executed).toHaveLength(1);
    for (const response of responses) {
      if (response.status === 409) {
        expectError(response, 409, "idempotency_key_in_use");
        expect(response.headers.get("retry-after")).toBe("1");
      } else {
        expect(response.status).toBe(201);
        expect(response.body.id).toBe(executed[0]?.body.id);
      }
    }
    expect(await appCount("concurrent")).toBe(1);
  });

  it("scopes keys to the caller: another credential of the organization with the same key and body runs its own request", async () => {
    const first = await createKey(api, tenant, ["keys:write"], "first caller");
    const second = await createKey(api, tenant, ["keys:write"], "second caller");
    const key = ik();
    const body = { name: "made under one key", scopes: ["keys:write"] };
    const made = await api.post(`${tenant.env}/api-keys`, body, {
      apiKey: first.secret,
      idempotencyKey: key,
    });
    expect(made.status).toBe(201);
    const secret = made.body.secret as string;

    // The same key and body from another key of the organization, then from the signed-in user.
    const other = await api.post(`${tenant.env}/api-keys`, body, {
      apiKey: second.secret,
      idempotencyKey: key,
    });
    expect(other.status).toBe(201);
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(other.body.id).not.toBe(made.body.id);
    expect(other.text).not.toContain(secret);
    const user = await api.post(`${tenant.env}/api-keys`, body, { token: tenant.token, idempotencyKey: key });
    expect(user.status).toBe(201);
    expect(user.headers.get("idempotent-replayed")).toBeNull();
    expect(user.text).not.toContain(secret);
    expect(user.text).not.toContain(other.body.secret);
    // Another body under the key from the second caller is that caller's reuse, never the first's answer.
    const reused = await api.post(
      `${tenant.env}/api-keys`,
      { ...body, name: "another body" },
      { apiKey: second.secret, idempotencyKey: key },
    );
    expectError(reused, 422, "idempotency_key_reused");
    expect(reused.text).not.toContain(secret);

    // The first caller still gets its own answer back.
    const replayed = await api.post(`${tenant.env}/api-keys`, body, {
      apiKey: first.secret,
      idempotencyKey: key,
    });
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body.secret).toBe(secret);
    const keys = await stack.db.query("SELECT count(*)::int AS n FROM api_keys WHERE name = $1", [body.name]);
    expect(keys.rows[0].n).toBe(3);
  });

  it("answers 409 idempotency_key_in_use with Retry-After while the key is held, executing nothing", async () => {
    const key = ik();
    // What a request still executing leaves in Redis: the key's lock.
    const { lock } = appKeys(key);
    await stack.redis.set(lock, "other-request", "PX", 5_000);
    const blocked = await api.post(
      `${tenant.org}/apps`,
      { slug: "held", name: "Held" },
      { token: tenant.token, idempotencyKey: key },
    );
    expectError(blocked, 409, "idempotency_key_in_use");
    expect(blocked.headers.get("retry-after")).toBe("1");
    expect(await appCount("held")).toBe(0);
  });

  it("leaves a key free after a request refused for its body, which the same key then runs", async () => {
    const key = ik();
    const { lock } = appKeys(key);
    // The caller's principal is cached by now: its key is claimed with the rate limit's count,
    // before the body is read, and released when the body is refused.
    expect((await api.get("/v1/auth/principal", { token: tenant.token })).status).toBe(200);
    const notJson = await postRawApp(key, "application/x-www-form-urlencoded", "slug=freed&name=Freed");
    expectError(notJson, 415, "unsupported_media_type");
    expect(await stack.redis.exists(lock)).toBe(0);
    const malformed = await postRawApp(key, "application/json", '{"slug": "freed",}');
    expect(malformed.status).toBe(422);
    expect(malformed.headers.get("idempotent-replayed")).toBeNull();
    expect(await stack.redis.exists(lock)).toBe(0);
    const ran = await postApp("freed", key);
    expect(ran.status).toBe(201);
    expect(ran.headers.get("idempotent-replayed")).toBeNull();
    expect(await appCount("freed")).toBe(1);
  });

  it("releases the lock when done and keeps the record for 24 hours", async () => {
    const key = ik();
    const first = await api.post(
      `${tenant.org}/apps`,
      { slug: "stored", name: "Stored" },
      { token: tenant.token, idempotencyKey: key },
    );
    expect(first.status).toBe(201);
    const { lock, record } = appKeys(key);
    expect(await stack.redis.exists(lock)).toBe(0);
    const ttl = await stack.redis.ttl(record);
    expect(ttl).toBeGreaterThan(24 * 3600 - 60);
    expect(ttl).toBeLessThanOrEqual(24 * 3600);
  });

  it("does not store a 5xx, so a retry with the same key executes again", async () => {
    const key = ik();
    const body = { slug: "after-failure", name: "After failure" };
    // A fault inside the control service after authentication: its table is briefly gone.
    await stack.db.query("ALTER TABLE apps RENAME TO apps_away");
    let failed: Awaited<ReturnType<ApiClient["post"]>>;
    try {
      failed = await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key });
    } finally {
      await stack.db.query("ALTER TABLE apps_away RENAME TO apps");
    }
    const detail = expectError(failed, 500, "internal");
    expect(JSON.stringify(detail)).not.toMatch(/apps|relation|SELECT|INSERT|at \w+ \(/);
    const retried = await api.post(`${tenant.org}/apps`, body, { token: tenant.token, idempotencyKey: key });
    expect(retried.status).toBe(201);
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(await appCount("after-failure")).toBe(1);
  });
});
