import { randomUUID } from "node:crypto";
import {
  connectNats,
  createLogger,
  EVENTS_CONSUMER,
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
import { storeTestEndpoint, TEST_ENVIRONMENT, testEvent, useTestDatabase } from "./database.test-support.js";
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

/** A dispatcher that attempts nothing and keeps what it is handed, with each store's commit. */
function recordingDispatcher(): Pick<
  Dispatcher,
  "wake" | "storedLease" | "take" | "queued" | "queuedTotal"
> & {
  handed: ClaimedDelivery[];
  commits: Array<Promise<boolean> | undefined>;
} {
  const handed: ClaimedDelivery[] = [];
  const commits: Array<Promise<boolean> | undefined> = [];
  return {
    handed,
    commits,
    wake: () => {},
    storedLease: () => ({ token: newId(), ms: 60_000 }),
    take: (deliveries, _leasedAt, committed) => {
      handed.push(...deliveries);
      commits.push(committed);
    },
    queued: () => 0,
    queuedTotal: () => handed.length,
  };
}

type Submitted = {
  text?: string;
  values?: unknown[];
  statements?: Array<{ text: string; values?: unknown[] }>;
};

/**
 * The pool the consumer is given, with `before` run ahead of every store checked against the
 * endpoint sets it was planned from (the statement's last parameter lists their fingerprints).
 * The store runs on a connection of its own (db/deliveries.ts), as a batch of kit's.
 */
function poolWithBeforeCheckedStore(pool: Pool, before: () => Promise<void>): Pool {
  const checked = (submitted: Submitted) => {
    const statement = submitted.statements?.[0] ?? submitted;
    const fingerprints = statement.values?.at(-1);
    return (
      statement.text?.includes("fresh AS MATERIALIZED") === true &&
      Array.isArray(fingerprints) &&
      fingerprints.length > 0
    );
  };
  const bound = <T extends object>(target: T, property: string | symbol) => {
    const value: unknown = Reflect.get(target, property);
    return typeof value === "function" ? value.bind(target) : value;
  };
  return new Proxy(pool, {
    get(target, property) {
      if (property !== "connect") return bound(target, property);
      return async () => {
        const client = await target.connect();
        return new Proxy(client, {
          get(inner, name) {
            if (name !== "query") return bound(inner, name);
            return (submitted: Submitted, ...rest: unknown[]) => {
              const query = inner.query.bind(inner) as (...args: unknown[]) => unknown;
              if (!checked(submitted)) return query(submitted, ...rest);
              // A batch's outcome is reported to the batch itself: what query answers is unused.
              void before().then(() => query(submitted, ...rest));
              return submitted;
            };
          },
        });
      };
    },
  });
}

/** Makes every commit that stores a delivery in the test database run `body` (plpgsql) first, until `undo`. */
async function atEachDeliveryCommit(body: string): Promise<{ undo(): Promise<void> }> {
  await db.pool.query(`CREATE FUNCTION at_delivery_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN ${body} RETURN NULL; END $$`);
  await db.pool.query(`CREATE CONSTRAINT TRIGGER at_delivery_commit AFTER INSERT ON webhook_deliveries
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION at_delivery_commit()`);
  return {
    async undo() {
      await db.pool.query("DROP TRIGGER at_delivery_commit ON webhook_deliveries");
      await db.pool.query("DROP FUNCTION at_delivery_commit()");
    },
  };
}

/** An event of the test environment, published on the stream. */
async function publishEvent(): Promise<EventEnvelope> {
  const { event } = testEvent(TEST_ENVIRONMENT, { n: 1 });
  await jetstream(nc).publish(`${route.prefix}.${TEST_ENVIRONMENT}.subject.imported`, JSON.stringify(event));
  return event;
}

/** The deliveries of an event in the table, as another session sees them. */
async function deliveriesOf(eventId: string): Promise<number> {
  const found = await db.pool.query("SELECT 1 FROM webhook_deliveries WHERE event_id = $1", [eventId]);
  return found.rowCount ?? 0;
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
      const event = await publishEvent();
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

  it("drops the events of an environment without endpoints on its kept set's fingerprint, and reads a set that changed", async () => {
    await db.pool.query("UPDATE webhook_endpoints SET deleted_at = now() WHERE deleted_at IS NULL");
    const sent: string[] = [];
    const dispatcher = recordingDispatcher();
    const consumer = createEventConsumer({
      nc,
      pool: poolRecording(db.pool, sent),
      logger,
      route,
      dispatcher,
    });
    consumer.start();
    try {
      // The first event's set is read: no endpoint, nothing stored.
      const first = await publishEvent();
      await allAcked();
      expect(sent.filter(isSetRead)).toHaveLength(1);
      // The second's comes from memory, confirmed by its fingerprint rather than read again.
      sent.length = 0;
      const second = await publishEvent();
      await allAcked();
      expect(sent.filter(isSetRead)).toEqual([]);
      expect(sent.filter((text) => text.includes("webhook_endpoint_sets_hold"))).toHaveLength(1);
      expect([await deliveriesOf(first.id), await deliveriesOf(second.id)]).toEqual([0, 0]);
      // An endpoint added since: the kept set no longer holds, and the third event reaches it.
      const endpoint = await storeTestEndpoint(db.pool, "https://receiver.example/added");
      const third = await publishEvent();
      await vi.waitFor(() => expect(dispatcher.handed).toHaveLength(1), { timeout: 10_000, interval: 20 });
      expect(dispatcher.handed[0]).toMatchObject({ endpoint_id: endpoint.id, event_id: third.id });
    } finally {
      await consumer.stop();
    }
  }, 30_000);

  it("hands the deliveries over while their store commits, and acks the message once it has", async () => {
    await onlyEndpoint("https://receiver.example/committing");
    const slow = await atEachDeliveryCommit("PERFORM pg_sleep(1);");
    const dispatcher = recordingDispatcher();
    const consumer = createEventConsumer({ nc, pool: db.pool, logger, route, dispatcher });
    consumer.start();
    try {
      const event = await publishEvent();
      await vi.waitFor(() => expect(dispatcher.handed).toHaveLength(1), { timeout: 10_000, interval: 20 });
      // Handed over, while the commit still runs: no other session sees the delivery yet, and
      // the message is not acked.
      expect(await deliveriesOf(event.id)).toBe(0);
      expect((await consumerInfo()).num_ack_pending).toBe(1);
      expect(await dispatcher.commits[0]).toBe(true);
      expect(await deliveriesOf(event.id)).toBe(1);
      await vi.waitFor(async () => expect((await consumerInfo()).num_ack_pending).toBe(0), {
        timeout: 5_000,
        interval: 20,
      });
    } finally {
      await consumer.stop();
      await slow.undo();
    }
  }, 30_000);

  it("answers a store whose commit failed as not stored, and stores the message when it comes again", async () => {
    await onlyEndpoint("https://receiver.example/failing-commit");
    await db.pool.query("CREATE SEQUENCE delivery_commits");
    // The first commit that stores a delivery fails (a sequence is not rolled back with it).
    const failing = await atEachDeliveryCommit(
      "IF nextval('delivery_commits') = 1 THEN RAISE EXCEPTION 'the commit failed'; END IF;",
    );
    const dispatcher = recordingDispatcher();
    const consumer = createEventConsumer({ nc, pool: db.pool, logger, route, dispatcher });
    consumer.start();
    try {
      const event = await publishEvent();
      await vi.waitFor(() => expect(dispatcher.handed).toHaveLength(2), { timeout: 10_000, interval: 20 });
      expect(dispatcher.handed.map((delivery) => delivery.event_id)).toEqual([event.id, event.id]);
      expect(await Promise.all(dispatcher.commits)).toEqual([false, true]);
      expect(await deliveriesOf(event.id)).toBe(1);
    } finally {
      await consumer.stop();
      await failing.undo();
      await db.pool.query("DROP SEQUENCE delivery_commits");
    }
  }, 30_000);
});

/** Leaves the test environment one endpoint, at `url`, created now (the others deleted). */
async function onlyEndpoint(url: string): Promise<void> {
  await db.pool.query("UPDATE webhook_endpoints SET deleted_at = now() WHERE deleted_at IS NULL");
  await storeTestEndpoint(db.pool, url);
}

/** The pool, with the text of every statement sent on it (not on a connection taken from it) kept in `sent`. */
function poolRecording(pool: Pool, sent: string[]): Pool {
  return new Proxy(pool, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      if (property !== "query") return value.bind(target);
      return (submitted: string | Submitted, ...rest: unknown[]) => {
        sent.push(typeof submitted === "string" ? submitted : (submitted.text ?? ""));
        return (value as (...args: unknown[]) => unknown).call(target, submitted, ...rest);
      };
    },
  });
}

/** A read of endpoint sets (db/endpoint-sets.ts). */
const isSetRead = (text: string) => text.includes("WITH sets AS");

/** Waits until the consumer has acked every message published so far. */
async function allAcked(): Promise<void> {
  await vi.waitFor(
    async () => {
      const info = await consumerInfo();
      expect([info.num_pending, info.num_ack_pending]).toEqual([0, 0]);
    },
    { timeout: 10_000, interval: 20 },
  );
}

/** The consumer's state on the stream. */
async function consumerInfo() {
  return (await jetstreamManager(nc)).consumers.info(route.stream, EVENTS_CONSUMER);
}
