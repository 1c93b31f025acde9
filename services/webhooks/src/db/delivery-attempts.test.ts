import { newId, type Pool } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import { storeLeasedDeliveries, storeTestEndpoint, useTestDatabase } from "../database.test-support.js";
import { disableEndpoint } from "../disable.js";
import { replayDeliveryRow } from "./deliveries.js";
import {
  type ClaimedDelivery,
  confirmLeases,
  releaseLeases,
  renewLeases,
  writeSuccesses,
} from "./delivery-attempts.js";

// The statements that settle or check a batch of leased deliveries: what each does to the rows
// it finds, and that it finds them by primary key rather than by reading the table.
const db = useTestDatabase();
const LEASE = { ms: 60_000 };

/** `count` events each delivered to `target`, stored leased under a fresh token, as the consumer hands them over. */
function storeLeased(
  target: Awaited<ReturnType<typeof storeTestEndpoint>>,
  count: number,
): Promise<ClaimedDelivery[]> {
  return storeLeasedDeliveries(db.pool, [target], count, { token: newId(), ms: LEASE.ms });
}

async function rows(ids: string[]) {
  const found = await db.pool.query<{
    id: string;
    status: string;
    attempt_count: number;
    claim_token: string | null;
    delivered_at: Date | null;
    response_status: number | null;
    attempts: number;
  }>(
    `SELECT d.id, d.status, d.attempt_count, d.claim_token, d.delivered_at, d.response_status,
       (SELECT count(*) FROM webhook_delivery_attempts a WHERE a.delivery_id = d.id)::int AS attempts
     FROM webhook_deliveries d WHERE d.id = ANY($1)`,
    [ids],
  );
  return new Map(found.rows.map((row) => [row.id, row]));
}

/** The text and values of a `query` call: `(text, values)` or a query config (a prepared statement's). */
function statementOf(args: unknown[]): { text: string; values: unknown[] } {
  const [first, second] = args;
  if (typeof first === "string") return { text: first, values: Array.isArray(second) ? second : [] };
  if (typeof first === "object" && first !== null && "text" in first && typeof first.text === "string") {
    return { text: first.text, values: "values" in first && Array.isArray(first.values) ? first.values : [] };
  }
  throw new Error("a query of a form this test does not read");
}

/** `pool` with the plan of each statement it runs (EXPLAIN of the same text and values) kept in `plans`. */
function explaining(pool: Pool): { pool: Pool; plans: string[] } {
  const plans: string[] = [];
  const observed = new Proxy(pool, {
    get(target, property, receiver) {
      if (property !== "query") return Reflect.get(target, property, receiver);
      return async (...args: unknown[]) => {
        const statement = statementOf(args);
        const explained = await target.query<{ "QUERY PLAN": string }>(
          `EXPLAIN ${statement.text}`,
          statement.values,
        );
        plans.push(explained.rows.map((row) => row["QUERY PLAN"]).join("\n"));
        return Reflect.apply(target.query, target, args);
      };
    },
  });
  return { pool: observed, plans };
}

describe("a batch of leased deliveries", () => {
  it("records successes: succeeded where the lease holds, counted only where a replay or disabling took it", async () => {
    const kept = await storeTestEndpoint(db.pool, "https://receiver.example/kept");
    const disabled = await storeTestEndpoint(db.pool, "https://receiver.example/disabled");
    const [held, replayed] = await storeLeased(kept, 2);
    const [stopped] = await storeLeased(disabled, 1);
    if (!held || !replayed || !stopped) throw new Error("stored fewer deliveries than asked");
    await replayDeliveryRow(db.pool, replayed.id);
    await disableEndpoint(db.pool, disabled.id, "requested");
    // Retention deleted it (final for days): no attempt is written for it.
    const gone = { ...held, id: newId() };
    const attemptedAt = new Date(Date.now() - 3);
    await writeSuccesses(
      db.pool,
      [held, replayed, stopped, gone].map((delivery) => ({
        delivery,
        status: 204,
        attemptedAt,
        durationMs: 3,
      })),
    );
    const after = await rows([held.id, replayed.id, stopped.id, gone.id]);
    expect(after.get(held.id)).toMatchObject({
      status: "succeeded",
      attempt_count: 1,
      claim_token: null,
      response_status: 204,
      attempts: 1,
    });
    expect(after.get(held.id)?.delivered_at).toBeInstanceOf(Date);
    const attempt = await db.pool.query(
      "SELECT attempted_at, response_status, duration_ms FROM webhook_delivery_attempts WHERE delivery_id = $1",
      [held.id],
    );
    expect(attempt.rows).toEqual([{ attempted_at: attemptedAt, response_status: 204, duration_ms: 3 }]);
    expect(after.get(replayed.id)).toMatchObject({
      status: "pending",
      attempt_count: 1,
      delivered_at: null,
      response_status: null,
      attempts: 1,
    });
    expect(after.get(stopped.id)).toMatchObject({ status: "dead_letter", attempt_count: 1, attempts: 1 });
    expect(after.has(gone.id)).toBe(false);
    const attempts = await db.pool.query("SELECT 1 FROM webhook_delivery_attempts WHERE delivery_id = $1", [
      gone.id,
    ]);
    expect(attempts.rowCount).toBe(0);
  });

  it("confirms only the leases still held on deliveries still waiting", async () => {
    const target = await storeTestEndpoint(db.pool, "https://receiver.example/confirmed");
    const [waiting, replayed, other] = await storeLeased(target, 3);
    if (!waiting || !replayed || !other) throw new Error("stored fewer deliveries than asked");
    await replayDeliveryRow(db.pool, replayed.id);
    const confirmed = await confirmLeases(db.pool, [waiting, replayed, { ...other, claim_token: newId() }]);
    expect([...confirmed.keys()]).toEqual([waiting.id]);
    expect(confirmed.get(waiting.id)).toMatchObject({ url: target.url, endpoint_stopped: false });
  });

  it("finds the batch by primary key on a young table, never by reading it or every waiting delivery", async () => {
    // Thousands of rows the statistics have not seen yet, as a fresh worker's table after a burst.
    const target = await storeTestEndpoint(db.pool, "https://receiver.example/young");
    const stored = await storeLeased(target, 3_000);
    const batch = stored.slice(1_000, 1_032);
    const observed = explaining(db.pool);
    await confirmLeases(observed.pool, batch);
    await renewLeases(observed.pool, batch, LEASE.ms);
    await writeSuccesses(
      observed.pool,
      batch
        .slice(0, 16)
        .map((delivery) => ({ delivery, status: 204, attemptedAt: new Date(), durationMs: 1 })),
    );
    await releaseLeases(observed.pool, batch.slice(16));
    expect(observed.plans).toHaveLength(4);
    for (const plan of observed.plans) {
      expect(plan).toMatch(/webhook_deliveries_pkey/);
      expect(plan).not.toMatch(/Seq Scan on webhook_deliveries|webhook_deliveries_due/);
    }
  });
});
