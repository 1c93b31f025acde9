// The gateway on a Redis Cluster (3 primaries, 3 replicas) of the test's own: the primary that
// holds the probed address's rate-limit window killed under load (docs/operations.md#redis-failover).
import { startRedisCluster, type TestRedisCluster } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FailoverSetup,
  failoverUnderLoad,
  PROBE_ADDRESS,
  RECOVERY_BOUND_MS,
  startOnRedis,
} from "./support/redis-failover.js";

let cluster: TestRedisCluster | undefined;
let setup: FailoverSetup | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster();
  setup = await startOnRedis(cluster.url);
}, 120_000);

afterAll(async () => {
  await setup?.platform.close();
  await cluster?.close();
});

describe("Redis Cluster", () => {
  it("fails over under load: no keyed write run twice, the rate limit held, writes acknowledged again within the bound", async () => {
    if (!cluster || !setup) throw new Error("not started");
    const nodes = cluster;
    // The address window's slot is its hash tag's (`redisKeys`, admission/round-trip.ts), whatever the prefix.
    const old = await nodes.primaryOf(`{ip:${PROBE_ADDRESS}}`);
    const run = await failoverUnderLoad(setup, "cluster", {
      kill: () => old.server.stop("SIGKILL"),
      promoted: () => nodes.failedOver(old.port),
    });
    expect(run.writingAt - run.killedAt).toBeLessThan(RECOVERY_BOUND_MS);
    expect((await nodes.primaries()).map((node) => node.port)).not.toContain(old.port);
  }, 120_000);
});
