import { connectNats, createLogger, ensureStreams, type NatsConnection, type StreamRoute } from "@evalp/kit";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startNatsCluster, type TestNatsCluster } from "./nats-server.js";

// Streams follow NATS_STREAM_REPLICAS, also those that exist: raising it on a running cluster
// must reach them, on a JetStream cluster of this file's own (one replica per node).
let cluster: TestNatsCluster;
let nc: NatsConnection;
const logger = createLogger("test", "silent");

beforeAll(async () => {
  cluster = await startNatsCluster(3);
  nc = await connectNats({ NATS_URL: cluster.urls[0] as string }, "streams-test", logger);
}, 30_000);
afterAll(async () => {
  await nc?.close();
  await cluster?.close();
});

describe("ensureStreams", () => {
  it("creates a stream with the route's replicas and brings an existing one to a new count", async () => {
    const route: StreamRoute = { stream: "REPLICATED", root: "events", prefix: "events", replicas: 1 };
    // The cluster elects its JetStream leader in a few seconds; until then stream calls fail.
    await vi.waitFor(() => ensureStreams(nc, [route]), { timeout: 20_000, interval: 250 });
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info("REPLICATED")).config.num_replicas).toBe(1);

    await ensureStreams(nc, [{ ...route, replicas: 3 }]);
    const raised = await jsm.streams.info("REPLICATED");
    expect(raised.config.num_replicas).toBe(3);
    expect(raised.config.subjects).toEqual(["events.>"]);
    await vi.waitFor(
      async () => expect((await jsm.streams.info("REPLICATED")).cluster?.replicas).toHaveLength(2),
      {
        timeout: 10_000,
        interval: 200,
      },
    );
  }, 40_000);
});
