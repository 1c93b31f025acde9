import { randomUUID } from "node:crypto";
import {
  connectNats,
  createLogger,
  type EventEnvelope,
  ensureStreams,
  type NatsConnection,
  newId,
  type Pool,
  type StreamRoute,
} from "@evalp/kit";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createEventConsumer } from "./consumer.js";
import { storeTestEndpoint, TEST_ENVIRONMENT, useTestDatabase } from "./database.test-support.js";
import type { ClaimedDelivery } from "./db/delivery-attempts.js";
import type { Dispatcher } from "./dispatcher.js";

// The events consumer against the local JetStream (a stream of this file's own) and a real
// `webhook_deliveries`, with a dispatcher that only records what it is handed.
const suffix = randomUUID().replaceAll("-", "").slice(0, 12).toUpperCase();
const route: StreamRoute = { stream: `CONSUMER_${suffix}`, root: "events", prefix: `consumer_${suffix}` };
const logger = createLogger("test", "silent");
const db = useTestDatabase();
let nc: NatsConnection;

beforeAll(async () => {
  nc = await connectNats(
    { NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
    "consumer-test",
    logger,
  );
  await ensureStreams(nc, [route]);
});
afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
});

/** A dispatcher that attempts nothing and keeps what it is handed. */
function recordingDispatcher(): Pick<
  Dispatcher,
  "wake" | "storedLease" | "take" | "queued" | "queuedTotal"
> & {
  handed: ClaimedDelivery[];
} {
  const handed: ClaimedDelivery[] = [];
  return {
    handed,
    wake: () => {},
    storedLease: () => ({ token: newId(), ms: 60_000 }),
    take: (deliveries) => {
      handed.push(...deliveries);
    },
    queued: () => 0,
    queuedTotal: () => handed.length,
  };
}

/**
 * The pool the consumer is given, with `before` run ahead of every store checked against the
 * endpoint sets it was planned from (the statement's last parameter lists their fingerprints).
 */
function poolWithBeforeCheckedStore(pool: Pool, before: () => Promise<void>): Pool {
  return new Proxy(pool, {
    get(target, property) {
      if (property === "query") {
        return async (text: string, values?: unknown[]) => {
          const fingerprints = values?.at(-1);
          if (
            text.includes("fresh AS MATERIALIZED") &&
            Array.isArray(fingerprints) &&
            fingerprints.length > 0
          ) {
            await before();
          }
          return target.query(text, values);
        };
      }
      const value: unknown = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("createEventConsumer", () => {
  it("stores a batch whose endpoints change under every checked plan, from a last plan read just before it", async () => {
    const endpoint = await storeTestEndpoint(db.pool, "https://receiver.example/hooks");
    let changes = 0;
    // A tenant rewriting its endpoint between each plan's read and its store.
    const changing = poolWithBeforeCheckedStore(db.pool, async () => {
      changes++;
      await db.pool.query("UPDATE webhook_endpoints SET url = $2 WHERE id = $1", [
        endpoint.id,
        `https://receiver.example/hooks?v=${changes}`,
      ]);
    });
    const dispatcher = recordingDispatcher();
    const consumer = createEventConsumer({ nc, pool: changing, logger, route, dispatcher });
    consumer.start();
    try {
      const event: EventEnvelope = {
        id: newId(),
        type: "subject.imported",
        timestamp: new Date().toISOString(),
        environment_id: TEST_ENVIRONMENT,
        data: { n: 1 },
      };
      await jetstream(nc).publish(
        `${route.prefix}.${TEST_ENVIRONMENT}.subject.imported`,
        JSON.stringify(event),
      );
      await vi.waitFor(() => expect(dispatcher.handed).toHaveLength(1), { timeout: 10_000, interval: 50 });
      // Two checked plans went stale; the third, from the read after the second change, stored.
      expect(changes).toBe(2);
      expect(dispatcher.handed).toEqual([
        expect.objectContaining({
          endpoint_id: endpoint.id,
          event_id: event.id,
          url: "https://receiver.example/hooks?v=2",
        }),
      ]);
      const stored = await db.pool.query<{ endpoint_id: string }>(
        "SELECT endpoint_id FROM webhook_deliveries WHERE event_id = $1",
        [event.id],
      );
      expect(stored.rows).toEqual([{ endpoint_id: endpoint.id }]);
    } finally {
      await consumer.stop();
    }
  }, 30_000);
});
