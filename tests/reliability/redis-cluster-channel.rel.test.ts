// The gateways' channel of credential changes on a Redis Cluster of the test's own, with two
// gateways (docs/operations.md#redis-failover): a key revoked through one gateway is refused by the
// other on the very next request, also once the primary that serves the channel's slot failed over.
import { startRedisCluster, type TestRedisCluster } from "@evalp/testing";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "../api/support/client.js";
import { createKey, createTenant, expectError, ik, type Tenant } from "../api/support/fixtures.js";
import { type PlatformProcesses, startProcesses } from "../api/support/processes.js";

let cluster: TestRedisCluster | undefined;
let platform: PlatformProcesses | undefined;
let both: ApiClient;
let gateways: ApiClient[];
let tenant: Tenant;

beforeAll(async () => {
  cluster = await startRedisCluster();
  platform = await startProcesses({ replicas: 2, startTimeoutMs: 120_000, env: { REDIS_URL: cluster.url } });
  both = apiClient(platform.urls);
  gateways = platform.urls.map((url) => apiClient(url));
  tenant = await createTenant(both);
}, 240_000);

afterAll(async () => {
  await platform?.close();
  await cluster?.close();
});

/** A key both gateways hold the principal of, revoked through the first: the second refuses it at once. */
async function revokedOnBoth(name: string): Promise<void> {
  const key = await createKey(both, tenant, ["org:read"], name);
  const read = (gateway: number) => gateways[gateway]!.get(tenant.app, { apiKey: key.secret });
  for (const gateway of [0, 1, 0, 1]) expect((await read(gateway)).status).toBe(200);
  const revoke = await gateways[0]!.post(`${tenant.env}/api-keys/${key.id}/revoke`, undefined, {
    token: tenant.token,
    idempotencyKey: ik(),
  });
  expect(revoke.status, revoke.text).toBe(200);
  expectError(await read(1), 401, "api_key_revoked");
}

/** The gateways subscribed to the sharded channel on the node that serves its slot now. */
async function subscribedGateways(channel: string): Promise<number> {
  if (!cluster) throw new Error("not started");
  const primary = await cluster.primaryOf(channel);
  const node = new Redis({ host: "127.0.0.1", port: primary.port, lazyConnect: true });
  try {
    await node.connect();
    const [, subscribed] = await node.pubsub("SHARDNUMSUB", channel);
    return Number(subscribed);
  } finally {
    node.disconnect();
  }
}

describe("credential changes on a Redis Cluster", () => {
  it("reach the other gateway before the change is answered, before and after the channel's primary failed over", async () => {
    if (!cluster || !platform) throw new Error("not started");
    const channel = `${platform.env.REDIS_KEY_PREFIX}principals:changed`;
    await vi.waitFor(async () => expect(await subscribedGateways(channel)).toBe(2), { timeout: 10_000 });
    // A message that crossed the cluster bus arrived tens of ms after its publish was answered:
    // ten revocations in a row, each read back at once.
    for (let i = 0; i < 10; i++) await revokedOnBoth(`before-${i}`);

    const old = await cluster.primaryOf(channel);
    await old.server.stop("SIGKILL");
    await cluster.failedOver(old.port);
    // Each gateway noticed the lost subscription (caching nothing meanwhile) and subscribed again,
    // on the promoted replica.
    await vi.waitFor(async () => expect(await subscribedGateways(channel)).toBe(2), { timeout: 30_000 });
    for (let i = 0; i < 10; i++) await revokedOnBoth(`after-${i}`);
  }, 120_000);
});
