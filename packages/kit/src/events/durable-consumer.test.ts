import { randomUUID } from "node:crypto";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createLogger } from "../telemetry/logger.js";
import { createDurableConsumer, type MessageOutcome } from "./durable-consumer.js";
import { connectNats, type NatsConnection, type StreamRoute } from "./nats.js";

// Against the local JetStream, on a stream of this file's own.
const suffix = randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase();
const route: StreamRoute = { stream: `DURABLE_${suffix}`, root: "events", prefix: `durable_${suffix}` };
const logger = createLogger("test", "silent");
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectNats(
    { NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
    "durable-test",
    logger,
  );
});
afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
});

/** Unacknowledged and undelivered messages of a consumer. */
async function backlog(durable: string) {
  const info = await (await jetstreamManager(nc)).consumers.info(route.stream, durable);
  return { pending: info.num_pending, unacknowledged: info.num_ack_pending };
}

describe("createDurableConsumer", () => {
  it("creates its stream and consumer, decodes, settles each message as the handler says, and refuses what does not decode", async () => {
    const durable = `first_${suffix}`;
    const handled: number[][] = [];
    let failOnce = true;
    const consumer = createDurableConsumer<number>({
      nc,
      route,
      durable,
      logger,
      // Messages pulled but not yet handed to the handler when it failed wait out their ack
      // deadline: a short one keeps the test quick.
      ackWaitMs: 2_000,
      batch: 16,
      decode: (message) => {
        const value: unknown = message.json();
        return typeof value === "number" ? value : null;
      },
      async handle(values) {
        handled.push(values);
        // The first handling fails as a store would: everything held is handed back.
        if (failOnce) {
          failOnce = false;
          throw new Error("store down");
        }
        return values.map((value): MessageOutcome => (value === 2 ? "term" : "ack"));
      },
    });
    consumer.start();
    await vi.waitFor(async () => expect(await backlog(durable)).toBeDefined(), { timeout: 10_000 });
    const js = jetstream(nc);
    for (const body of ["1", '"not a number"', "2", "3"]) await js.publish(`${route.prefix}.x`, body);
    await vi.waitFor(async () => expect(await backlog(durable)).toEqual({ pending: 0, unacknowledged: 0 }), {
      timeout: 15_000,
      interval: 100,
    });
    await consumer.stop();
    // The refused message never reached the handler; the others did, again after the failure.
    expect(new Set(handled.flat())).toEqual(new Set([1, 2, 3]));
    expect(new Set(handled.slice(1).flat())).toEqual(new Set([1, 2, 3]));
  }, 30_000);

  it("stops cleanly before and while consuming", async () => {
    const durable = `second_${suffix}`;
    const options = {
      nc,
      route,
      durable,
      logger,
      ackWaitMs: 30_000,
      batch: 4,
      decode: () => 1,
      handle: async () => undefined,
    };
    const idle = createDurableConsumer(options);
    await idle.stop();
    const running = createDurableConsumer(options);
    running.start();
    await vi.waitFor(async () => expect(await backlog(durable)).toBeDefined(), { timeout: 10_000 });
    await running.stop();
  }, 30_000);
});
