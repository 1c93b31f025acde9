import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "./support/fixtures.js";
import { subscribers } from "./support/redis.js";
import { type Stack, startStack } from "./support/stack.js";

// Gateways remember who a credential is (PRINCIPAL_CACHE_TTL_MS); these tests hold them to never
// letting a remembered principal outlive a change made through any gateway.
const lines: string[] = [];
let stack: Stack;
/** The stack's first gateway, and (`other`) its second, as two replicas run. */
let api: ApiClient;
let other: { api: ApiClient };
let tenant: Tenant;

beforeAll(async () => {
  stack = await startStack({ PRINCIPAL_CACHE_TTL_MS: "60000" }, { logLines: lines });
  api = apiClient(stack.urls[0] as string);
  other = { api: apiClient(stack.urls[1] as string) };
  tenant = await createTenant(api);
  // Both gateways subscribe to the invalidation channel before they cache anything.
  await vi.waitFor(async () => expect(await subscribers(stack.redis, channel())).toBe(2));
});
afterAll(async () => {
  await stack?.close();
});

const channel = () => `${stack.config.REDIS_KEY_PREFIX}principals:changed`;
const authentications = () =>
  lines.filter((line) => {
    const entry = JSON.parse(line) as Record<string, unknown>;
    return entry.service === "control" && entry.rpc === "Authenticate";
  }).length;

describe("the gateways' principal cache", () => {
  it("resolves a credential once, then answers from memory", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    const before = authentications();
    for (let i = 0; i < 5; i++) expect((await api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);
    expect(authentications() - before).toBe(1);
  });

  it("refuses a key revoked through another gateway on the very next request", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    // Both gateways have the key's principal in memory.
    expect((await api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);
    expect((await other.api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);
    const revoked = await other.api.post(`${tenant.env}/api-keys/${key.id}/revoke`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(revoked.status).toBe(200);
    expectError(await api.get(tenant.app, { apiKey: key.secret }), 401, "api_key_revoked");
    expectError(await other.api.get(tenant.app, { apiKey: key.secret }), 401, "api_key_revoked");
  });

  it("forgets only what a change touched: a revoked key's neighbours are still answered from memory", async () => {
    const kept = await createKey(api, tenant, ["org:read"], "kept");
    const revoked = await createKey(api, tenant, ["org:read"], "revoked");
    for (const key of [kept, revoked])
      expect((await api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);
    const before = authentications();
    const revoke = await other.api.post(`${tenant.env}/api-keys/${revoked.id}/revoke`, undefined, {
      token: tenant.token,
      idempotencyKey: ik(),
    });
    expect(revoke.status).toBe(200);
    expect((await api.get(tenant.app, { apiKey: kept.secret })).status).toBe(200);
    expectError(await api.get(tenant.app, { apiKey: revoked.secret }), 401, "api_key_revoked");
    // The revoked key was asked about again (it is refused); the kept one was not.
    expect(authentications() - before).toBe(1);
  });

  it("forgets a change whose answer was an error after it may have been made, never one refused", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    expect((await api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);
    const before = authentications();
    // Refused by the gateway (no Idempotency-Key): nothing changed, nothing is forgotten.
    const refused = await other.api.post(`${tenant.env}/api-keys/${key.id}/revoke`, undefined, {
      token: tenant.token,
    });
    expect(refused.status).toBe(422);
    expect((await api.get(tenant.app, { apiKey: key.secret })).status).toBe(200);
    expect(authentications() - before).toBe(0);
  });

  it("refuses a logged-out session at once on every gateway", async () => {
    const login = await api.post("/auth/login", { email: tenant.email, password: tenant.password });
    const token = login.body.access_token as string;
    expect((await api.get(tenant.org, { token })).status).toBe(200);
    expect((await other.api.get(tenant.org, { token })).status).toBe(200);
    expect((await api.post("/auth/logout", undefined, { token })).status).toBe(204);
    expectError(await other.api.get(tenant.org, { token }), 401, "unauthenticated");
    expectError(await api.get(tenant.org, { token }), 401, "unauthenticated");
  });

  it("lets a session use an organization it created the moment it exists", async () => {
    expect((await other.api.get(tenant.org, { token: tenant.token })).status).toBe(200);
    const created = await api.post(
      "/v1/organizations",
      { name: "Second" },
      { token: tenant.token, idempotencyKey: ik() },
    );
    expect(created.status).toBe(201);
    const second = `/v1/organizations/${created.body.id}`;
    expect((await other.api.get(second, { token: tenant.token })).status).toBe(200);
  });

  it("still sees changes made behind the API's back once the TTL has passed", async () => {
    const short = await startStack({ PRINCIPAL_CACHE_TTL_MS: "300" });
    try {
      const shortApi = apiClient(short.url);
      const owner = await createTenant(shortApi);
      const key = await createKey(shortApi, owner, ["org:read"]);
      expect((await shortApi.get(owner.app, { apiKey: key.secret })).status).toBe(200);
      await short.db.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [key.id]);
      await vi.waitFor(
        async () =>
          expectError(await shortApi.get(owner.app, { apiKey: key.secret }), 401, "api_key_revoked"),
        { timeout: 2_000, interval: 100 },
      );
    } finally {
      await short.close();
    }
  });
});
