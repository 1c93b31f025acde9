import { type EventEnvelope, newId, type Queryable, withTransaction } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import { recordAttempt } from "../attempts.js";
import {
  TEST_ENVIRONMENT as ENVIRONMENT,
  firstAttempt,
  storeTestEndpoint,
  testEvent,
  testSealer,
  useTestDatabase,
} from "../database.test-support.js";
import { insertEventDeliveries } from "./deliveries.js";
import { writeSuccesses } from "./delivery-attempts.js";
import { webhooksRetention } from "./retention.js";

// No foreign key keeps a delivery's event or an attempt's delivery (009_delivery_references.sql):
// the writers keep them, and these tests break when one of them stops doing so.
const RETENTION = { RETENTION_OUTBOX_DAYS: 7, RETENTION_WEBHOOK_DELIVERIES_DAYS: 30 };
const db = useTestDatabase();

const endpoint = () => storeTestEndpoint(db.pool, "https://receiver.example/hook");

/** Stores `stored`'s event (again, when it is there already) with one delivery to `endpointId`. */
function storeDelivery(db: Queryable, stored: { event: EventEnvelope; body: string }, endpointId: string) {
  const delivery = {
    id: newId(),
    environmentId: ENVIRONMENT,
    endpointId,
    eventId: stored.event.id,
    eventType: stored.event.type,
    traceContext: null,
  };
  return insertEventDeliveries(db, [stored], [delivery]).then(() => delivery.id);
}

async function eventExists(id: string): Promise<boolean> {
  const found = await db.pool.query("SELECT 1 FROM webhook_events WHERE id = $1", [id]);
  return found.rowCount === 1;
}

/** An event stored long ago (past retention) that no delivery refers to. */
async function orphanEvent(): Promise<{ event: EventEnvelope; body: string }> {
  const stored = testEvent(ENVIRONMENT);
  await db.pool.query(
    `INSERT INTO webhook_events (id, environment_id, event_type, body, created_at)
     VALUES ($1, $2, $3, $4, now() - interval '40 days')`,
    [stored.event.id, ENVIRONMENT, stored.event.type, stored.body],
  );
  return stored;
}

/** Runs retention's `webhook_events` batch in a transaction, calling `between` after its first query. */
async function deleteOrphanEvents(between: () => Promise<void> = async () => {}): Promise<number> {
  const task = webhooksRetention(RETENTION, testSealer).find((each) => each.table === "webhook_events");
  if (!task) throw new Error("no webhook_events task");
  return withTransaction(db.pool, async (tx) => {
    let first = true;
    // The transaction as the task sees it, with `between` run once its first query returned.
    const observed = new Proxy(tx, {
      get(target, property, receiver) {
        if (property !== "query") return Reflect.get(target, property, receiver);
        return async (...args: unknown[]) => {
          const result: unknown = await Reflect.apply(target.query, target, args);
          if (first) {
            first = false;
            await between();
          }
          return result;
        };
      },
    });
    const deleted = await task.deleteBatch(observed, 100);
    return deleted.webhook_events ?? 0;
  });
}

describe("references kept without foreign keys", () => {
  it("locks an event already stored while deliveries of it are stored again, until they commit", async () => {
    const [a, b] = [await endpoint(), await endpoint()];
    const stored = testEvent(ENVIRONMENT);
    await storeDelivery(db.pool, stored, a.id);
    await withTransaction(db.pool, async (tx) => {
      await storeDelivery(tx, stored, b.id);
      const free = await db.pool.query("SELECT id FROM webhook_events WHERE id = $1 FOR UPDATE SKIP LOCKED", [
        stored.event.id,
      ]);
      expect(free.rowCount).toBe(0);
    });
  });

  it("deletes an old event only when, once it is locked, no delivery refers to it", async () => {
    const target = await endpoint();
    const kept = await orphanEvent();
    // A delivery of it committed after retention's first look and before its delete (written
    // directly: the consumer's own insert would wait on retention's lock instead).
    const referring = async () => {
      await db.pool.query(
        `INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, now())`,
        [newId(), ENVIRONMENT, target.id, kept.event.id, kept.event.type],
      );
    };
    expect(await deleteOrphanEvents(referring)).toBe(0);
    expect(await eventExists(kept.event.id)).toBe(true);
    const gone = await orphanEvent();
    expect(await deleteOrphanEvents()).toBe(1);
    expect(await eventExists(gone.event.id)).toBe(false);
  });

  it("writes no attempt for a delivery that is no longer there", async () => {
    const target = await endpoint();
    const missing = firstAttempt(target, { eventId: newId(), body: "{}", token: newId() });
    await writeSuccesses(db.pool, [
      { delivery: missing, status: 204, attemptedAt: new Date(), durationMs: 3 },
    ]);
    await recordAttempt(
      db.pool,
      missing,
      { ok: false, status: 500, error: "HTTP 500", durationMs: 3 },
      [100],
    );
    const attempts = await db.pool.query("SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = $1", [
      missing.id,
    ]);
    expect(attempts.rowCount).toBe(0);
  });
});
