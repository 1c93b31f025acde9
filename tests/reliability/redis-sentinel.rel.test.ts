// The gateway on a Sentinel set (1 primary, 2 replicas, 3 sentinels) of the test's own: its
// primary killed under load (docs/operations.md#redis-failover).
import { startRedisSentinelSet, type TestRedisSentinelSet } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FailoverSetup,
  failoverUnderLoad,
  RECOVERY_BOUND_MS,
  startOnRedis,
} from "./support/redis-failover.js";

let sentinels: TestRedisSentinelSet | undefined;
let setup: FailoverSetup | undefined;

beforeAll(async () => {
  sentinels = await startRedisSentinelSet();
  setup = await startOnRedis(sentinels.url);
}, 120_000);

afterAll(async () => {
  await setup?.platform.close();
  await sentinels?.close();
});

describe("Redis through Sentinel", () => {
  it("fails over under load: no keyed write run twice, the rate limit held, writes acknowledged again within the bound", async () => {
    if (!sentinels || !setup) throw new Error("not started");
    const set = sentinels;
    const old = await set.primary();
    let promoted = old;
    const run = await failoverUnderLoad(setup, "sentinel", {
      kill: () => old.server.stop("SIGKILL"),
      promoted: async () => {
        promoted = await set.failedOver(old.port);
      },
    });
    expect(promoted.port).not.toBe(old.port);
    expect(run.writingAt - run.killedAt).toBeLessThan(RECOVERY_BOUND_MS);
  }, 120_000);
});
