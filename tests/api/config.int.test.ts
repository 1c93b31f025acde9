import { createHash, randomUUID } from "node:crypto";
import { idempotencyId, operatorScope, redisKeys } from "@evalp/gateway";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { type Stack, startStack, useStack } from "./support/stack.js";

const LEGACY_KEY = `legacy-${randomUUID()}`;
const LEGACY_ENVIRONMENT = randomUUID();
const RATE_LIMIT = 8;
/** The route pattern of an environment's endpoints, as Idempotency-Key scopes name it. */
const ENV_ROUTE = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startStack({
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    LEGACY_API_KEYS: `${createHash("sha256").update(LEGACY_KEY).digest("hex")}:${LEGACY_ENVIRONMENT}`,
    LEGACY_API_KEYS_SUNSET_AT: "2027-06-30T00:00:00Z",
  });
  api = apiClient(stack.urls);
  tenant = await createTenant(api);
  // The environment a legacy key was configured for, as a migrating client's would exist.
  await stack.db.query(
    "INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, 'legacy', 'Legacy')",
    [LEGACY_ENVIRONMENT, tenant.appId],
  );
});
afterAll(async () => {
  await stack?.close();
});

describe("legacy keys (LEGACY_API_KEYS)", () => {
  it("authenticate as kind legacy in their environment, every answer carrying Deprecation, Link and Sunset", async () => {
    const principal = await api.get("/v1/auth/principal", { token: LEGACY_KEY });
    expect(principal.status).toBe(200);
    // RFC 9745: `@` and the Unix time of LEGACY_API_KEYS_DEPRECATED_AT (its default here).
    expect(principal.headers.get("deprecation")).toBe("@1767225600");
    expect(principal.headers.get("link")).toMatch(
      /^<https?:\/\/[^>]+\/docs\/guides\/authentication\.md#legacy-keys>; rel="deprecation"; type="text\/markdown"$/,
    );
    // RFC 8594: an HTTP date.
    expect(principal.headers.get("sunset")).toBe("Wed, 30 Jun 2027 00:00:00 GMT");
    expect(principal.body).toMatchObject({ kind: "legacy", api_key_name: null, email: null });
    // The data an old integration moved, nothing of the organization, its keys or its agents.
    expect(principal.body.scopes).toContain("subjects:write");
    for (const scope of [
      "interviews:agent",
      "org:read",
      "org:admin",
      "keys:write",
      "apps:write",
      "quotas:write",
    ]) {
      expect(principal.body.scopes).not.toContain(scope);
    }
    const webhooks = await api.get(`${tenant.app}/environments/${LEGACY_ENVIRONMENT}/webhooks`, {
      token: LEGACY_KEY,
    });
    expect(webhooks.status).toBe(200);
    expect(webhooks.headers.get("deprecation")).toBe("@1767225600");
    const keys = await api.get(`${tenant.app}/environments/${LEGACY_ENVIRONMENT}/api-keys`, {
      token: LEGACY_KEY,
    });
    expectError(keys, 403, "forbidden");
    expect(keys.body.detail.context).toEqual({ required_scope: "keys:write" });
    // Its reach is its own environment.
    expectError(await api.get(`${tenant.env}/webhooks`, { token: LEGACY_KEY }), 403, "forbidden");
    // Ordinary credentials get none of them.
    const ordinary = await api.get("/v1/auth/principal", { token: tenant.token });
    expect(ordinary.headers.get("deprecation")).toBeNull();
    expect(ordinary.headers.get("sunset")).toBeNull();
  });
});

describe("rate limit (RATE_LIMIT_PER_MINUTE)", () => {
  it("counts per credential and answers 429 rate_limited with Retry-After past the limit", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    const statuses: number[] = [];
    let last: Awaited<ReturnType<ApiClient["get"]>> | undefined;
    for (let i = 0; i < RATE_LIMIT + 2; i++) {
      last = await api.get(tenant.org, { token: key.secret });
      statuses.push(last.status);
    }
    expect(statuses.slice(0, RATE_LIMIT).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(RATE_LIMIT)).toEqual([429, 429]);
    const limited = last as Awaited<ReturnType<ApiClient["get"]>>;
    expectError(limited, 429, "rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("ratelimit-limit")).toBe(String(RATE_LIMIT));
    expect(limited.headers.get("ratelimit-remaining")).toBe("0");
    // Another credential has its own budget.
    expect((await api.get("/v1/auth/principal", { token: tenant.token })).status).toBe(200);
  });

  it("counts idempotent requests and their replays alike, and a request it refuses claims no key", async () => {
    const key = await createKey(api, tenant, ["subjects:write"], "importer");
    const url = `${tenant.env}/subjects/batch`;
    const body = (externalId: string) => ({
      items: [{ external_id: externalId, identity_mode: "anonymous", profile: {} }],
    });
    const first = ik();
    const ran = await api.post(url, body("limited-1"), { token: key.secret, idempotencyKey: first });
    expect(ran.status).toBe(200);
    expect(ran.headers.get("ratelimit-remaining")).toBe(String(RATE_LIMIT - 1));
    const replayed = await api.post(url, body("limited-1"), { token: key.secret, idempotencyKey: first });
    expect(replayed.status).toBe(200);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
    expect(replayed.body.items).toEqual(ran.body.items);
    expect(replayed.headers.get("ratelimit-remaining")).toBe(String(RATE_LIMIT - 2));
    const reused = await api.post(url, body("limited-2"), { token: key.secret, idempotencyKey: first });
    expectError(reused, 422, "idempotency_key_reused");
    expect(reused.headers.get("ratelimit-remaining")).toBe(String(RATE_LIMIT - 3));
    for (let i = 3; i < RATE_LIMIT; i++) {
      const fresh = await api.post(url, body(`limited-fresh-${i}`), {
        token: key.secret,
        idempotencyKey: ik(),
      });
      expect(fresh.status).toBe(200);
    }
    // Past the limit: refused before anything runs or is claimed, replays included.
    const refusedKey = ik();
    const refused = await api.post(url, body("limited-refused"), {
      token: key.secret,
      idempotencyKey: refusedKey,
    });
    expectError(refused, 429, "rate_limited");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    expectError(
      await api.post(url, body("limited-1"), { token: key.secret, idempotencyKey: first }),
      429,
      "rate_limited",
    );
    const id = idempotencyId(
      operatorScope("api_key", key.id, tenant.organizationId),
      "POST",
      `${ENV_ROUTE}/subjects/batch`,
      refusedKey,
    );
    const keys = redisKeys(stack.config.REDIS_KEY_PREFIX);
    expect(await stack.redis.exists(keys.idempotencyLock(id), keys.idempotencyRecord(id))).toBe(0);
    const subjects = await stack.db.query("SELECT count(*)::int AS n FROM subjects WHERE external_id = $1", [
      "limited-refused",
    ]);
    expect(subjects.rows[0].n).toBe(0);
  });
});

describe("SIGNUP_ENABLED=false", () => {
  // A stack of its own, started before the test (under the hook's timeout, as every stack is).
  const closed = useStack({ SIGNUP_ENABLED: "false" });

  it("turns sign-up off with 404", async () => {
    const response = await closed.api.post("/auth/signup", {
      email: "late@example.com",
      password: "password123",
      organization_name: "Late",
    });
    expectError(response, 404, "not_found");
    const users = await closed.stack.db.query("SELECT count(*)::int AS n FROM users");
    expect(users.rows[0].n).toBe(0);
  });
});
