import { createHash } from "node:crypto";
import { redisKeys } from "@evalp/gateway";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createKey, createTenant, expectError, type Tenant } from "./support/fixtures.js";
import { type Stack, startStack } from "./support/stack.js";

// A gateway counts reads from counts of the window it took from Redis at once (docs/http.md#rate-limiting):
// with a limit of 200 a minute, ten at a time.
const LIMIT = 200;
const LEASE = LIMIT / 20;

let stack: Stack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startStack({ RATE_LIMIT_PER_MINUTE: String(LIMIT) });
  api = apiClient(stack.urls);
  tenant = await createTenant(api);
});
afterAll(async () => {
  await stack?.close();
});

/** What Redis holds of a credential's window: the counts every gateway took of it. */
async function takenOf(secret: string): Promise<number> {
  const credentialHash = createHash("sha256").update(secret).digest("hex").slice(0, 32);
  const key = redisKeys(stack.config.REDIS_KEY_PREFIX).credentialWindow(credentialHash);
  return Number((await stack.redis.get(key)) ?? 0);
}

describe("rate limit leases", () => {
  it("spends each count of a window once across gateways, asks Redis once per ten reads, and never admits past the limit", async () => {
    const key = await createKey(api, tenant, ["org:read"]);
    const counts: number[] = [];
    // The test's requests alternate between the stack's two gateways, as a balancer does.
    for (let i = 0; i < 21; i++) {
      const read = await api.get(tenant.org, { token: key.secret });
      expect(read.status).toBe(200);
      counts.push(LIMIT - Number(read.headers.get("ratelimit-remaining")));
    }
    // Each read was a count of its own (the headers say which), none given twice.
    expect(new Set(counts).size).toBe(counts.length);
    expect(counts[0]).toBe(1);
    // Each gateway's first read proved the key with control and was counted alone; each spent one
    // lease of ten on the next nineteen.
    expect(await takenOf(key.secret)).toBe(2 + 2 * LEASE);

    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await api.get(tenant.org, { token: key.secret })).status);
    const admitted = 21 + statuses.filter((status) => status === 200).length;
    // Never past the limit; short of it by at most what the other gateway held unspent.
    expect(admitted).toBeLessThanOrEqual(LIMIT);
    expect(admitted).toBeGreaterThanOrEqual(LIMIT - LEASE);
    const refused = await api.get(tenant.org, { token: key.secret });
    expectError(refused, 429, "rate_limited");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    // Past the limit each gateway refuses from what it holds: Redis is not asked for every refusal.
    const taken = await takenOf(key.secret);
    for (let i = 0; i < 6; i++) expect((await api.get(tenant.org, { token: key.secret })).status).toBe(429);
    expect(await takenOf(key.secret)).toBe(taken);
  });
});
