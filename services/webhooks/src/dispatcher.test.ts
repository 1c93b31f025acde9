import { setTimeout as sleep } from "node:timers/promises";
import { createLogger, newId, withTransaction } from "@evalp/kit";
import { describe, expect, it, vi } from "vitest";
import {
  testSealer as sealer,
  storeLeasedDeliveries,
  storeTestEndpoint,
  useTestDatabase,
} from "./database.test-support.js";
import { deadLetterWaiting } from "./db/deliveries.js";
import type { ClaimedDelivery } from "./db/delivery-attempts.js";
import { markDeleted } from "./db/endpoints.js";
import type { Sender, SendInput } from "./deliver.js";
import { disableEndpoint } from "./disable.js";
import { createDispatcher, type Dispatcher } from "./dispatcher.js";
import { generateSecret } from "./secrets.js";

// The dispatcher's memory path against a real `webhook_deliveries`: deliveries stored leased to
// it and handed over, as the events consumer does, with a sender that only records.
const TIMEOUT_MS = 1_000;
const logger = createLogger("test", "silent");
const db = useTestDatabase();

/**
 * A sender whose attempts all succeed after `delayMs`, in the order they were made, with when
 * each began (`performance.now()`).
 */
function recordingSender(delayMs = 5): Sender & { sent: SendInput[]; startedAt: number[] } {
  const sent: SendInput[] = [];
  const startedAt: number[] = [];
  return {
    sent,
    startedAt,
    async send(input) {
      sent.push(input);
      startedAt.push(performance.now());
      await sleep(delayMs);
      return { ok: true, status: 204, durationMs: delayMs };
    },
    close: async () => {},
  };
}

/** A started dispatcher: its rounds claim from the table beside what it is handed. */
function dispatcherWith(sender: Sender, bounds: { concurrency: number; perEndpoint: number }): Dispatcher {
  const dispatcher = createDispatcher({
    pool: db.pool,
    logger,
    sealer,
    sender,
    schedule: [100],
    timeoutMs: TIMEOUT_MS,
    ...bounds,
  });
  dispatcher.start();
  return dispatcher;
}

/** Stores `count` events for each new endpoint, leased under `lease`; what the dispatcher is handed. */
async function storeLeased(
  endpoints: number,
  count: number,
  lease: { token: string; ms: number },
): Promise<ClaimedDelivery[]> {
  const targets = [];
  for (let i = 0; i < endpoints; i++) {
    targets.push(await storeTestEndpoint(db.pool, `https://receiver.example/${i}`));
  }
  return storeLeasedDeliveries(db.pool, targets, count, lease);
}

/**
 * `count` deliveries to a new endpoint, stored leased in a transaction left open on `store`, and
 * handed to the dispatcher as the events consumer hands them while their store commits: the
 * test ends the transaction, then says whether it committed with `committed`.
 */
async function handedWhileStoring(dispatcher: Dispatcher, path: string, count: number) {
  const target = await storeTestEndpoint(db.pool, `https://receiver.example/${path}`);
  const store = await db.pool.connect();
  await store.query("BEGIN");
  const handed = await storeLeasedDeliveries(store, [target], count, dispatcher.storedLease());
  let committed: (stored: boolean) => void = () => {};
  dispatcher.take(
    handed,
    performance.now(),
    new Promise((resolve) => {
      committed = resolve;
    }),
  );
  return { store, handed, committed };
}

async function statuses(ids: string[]) {
  const found = await db.pool.query<{
    id: string;
    status: string;
    attempt_count: number;
    claim_token: string | null;
    last_error: string | null;
  }>("SELECT id, status, attempt_count, claim_token, last_error FROM webhook_deliveries WHERE id = ANY($1)", [
    ids,
  ]);
  return new Map(found.rows.map((row) => [row.id, row]));
}

describe("createDispatcher, deliveries handed over in memory", { timeout: 20_000 }, () => {
  it("attempts them per endpoint in the order stored, within the bounds, and records each as succeeded", async () => {
    const sender = recordingSender();
    const dispatcher = dispatcherWith(sender, { concurrency: 3, perEndpoint: 1 });
    const handed = await storeLeased(3, 5, dispatcher.storedLease());
    dispatcher.take(handed, performance.now());
    // Every endpoint is served from the first round on, not one after the other.
    expect(new Set(sender.sent.map((input) => input.url)).size).toBe(3);
    await vi.waitFor(
      async () => {
        const rows = await statuses(handed.map((d) => d.id));
        expect([...rows.values()].every((row) => row.status === "succeeded" && row.attempt_count === 1)).toBe(
          true,
        );
      },
      { timeout: 10_000, interval: 50 },
    );
    for (const url of new Set(handed.map((d) => d.url))) {
      const expected = handed.filter((d) => d.url === url).map((d) => d.event_id);
      expect(sender.sent.filter((input) => input.url === url).map((input) => input.eventId)).toEqual(
        expected,
      );
    }
    await dispatcher.stop();
  });

  it("renews leases that ran short while waiting, and drops the deliveries another worker took meanwhile", async () => {
    const sender = recordingSender();
    const dispatcher = dispatcherWith(sender, { concurrency: 2, perEndpoint: 2 });
    const lease = dispatcher.storedLease();
    const handed = await storeLeased(1, 4, lease);
    const [taken] = handed;
    // Another worker's claim after this worker's lease ran out.
    await db.pool.query("UPDATE webhook_deliveries SET claim_token = $2 WHERE id = $1", [taken?.id, newId()]);
    // Handed over as if stored long ago: what is left of the lease is shorter than an attempt's.
    dispatcher.take(handed, performance.now() - lease.ms);
    await vi.waitFor(() => expect(sender.sent).toHaveLength(3), { timeout: 10_000, interval: 20 });
    expect(sender.sent.map((input) => input.eventId)).toEqual(handed.slice(1).map((d) => d.event_id));
    expect(dispatcher.queuedTotal()).toBe(0);
    await dispatcher.stop();
  });

  it("sends deliveries handed over while their store commits, and records their outcome once it has", async () => {
    const sender = recordingSender();
    const dispatcher = dispatcherWith(sender, { concurrency: 2, perEndpoint: 2 });
    const { store, handed, committed } = await handedWhileStoring(dispatcher, "committing", 2);
    try {
      await vi.waitFor(() => expect(sender.sent).toHaveLength(2), { timeout: 5_000, interval: 10 });
      // Both sent while the store commits; their outcome waits for it.
      await sleep(100);
      await store.query("COMMIT");
      const waiting = await statuses(handed.map((d) => d.id));
      expect([...waiting.values()].map((row) => [row.status, row.attempt_count])).toEqual([
        ["pending", 0],
        ["pending", 0],
      ]);
      committed(true);
      await vi.waitFor(
        async () => {
          const rows = await statuses(handed.map((d) => d.id));
          expect([...rows.values()].map((row) => [row.status, row.attempt_count])).toEqual([
            ["succeeded", 1],
            ["succeeded", 1],
          ]);
        },
        { timeout: 5_000, interval: 50 },
      );
    } finally {
      store.release();
      await dispatcher.stop();
    }
  });

  it("records nothing, and sends no more, of deliveries whose store did not commit", async () => {
    const sender = recordingSender(50);
    const dispatcher = dispatcherWith(sender, { concurrency: 1, perEndpoint: 1 });
    const { store, committed } = await handedWhileStoring(dispatcher, "rolled-back", 3);
    try {
      await vi.waitFor(() => expect(sender.sent).toHaveLength(1), { timeout: 5_000, interval: 10 });
      await store.query("ROLLBACK");
      committed(false);
      await sleep(300);
      // The first was on its way; the two waiting behind it are not sent.
      expect(sender.sent).toHaveLength(1);
      expect(dispatcher.queuedTotal()).toBe(0);
    } finally {
      store.release();
      await dispatcher.stop();
    }
  });

  it("gives the deliveries still waiting back to the table when it stops", async () => {
    const sender = recordingSender(200);
    const dispatcher = dispatcherWith(sender, { concurrency: 1, perEndpoint: 1 });
    const handed = await storeLeased(1, 3, dispatcher.storedLease());
    dispatcher.take(handed, performance.now());
    expect(dispatcher.queued(handed[0]?.endpoint_id ?? "")).toBe(2);
    await dispatcher.stop();
    expect(sender.sent).toHaveLength(1);
    const rows = await statuses(handed.map((d) => d.id));
    expect(rows.get(handed[0]?.id ?? "")?.status).toBe("succeeded");
    for (const waiting of handed.slice(1)) {
      expect(rows.get(waiting.id)).toMatchObject({ status: "pending", attempt_count: 0, claim_token: null });
    }
  });

  /**
   * An endpoint stopped while its deliveries wait in memory: once the bound on how long ago a
   * waiting delivery was seen held has passed (250 ms; a generous margin here), none is sent, and
   * those the stop dead-lettered stay so, unattempted.
   */
  async function stoppedWhileQueued(stop: (endpointId: string) => Promise<void>, lastError: string) {
    const sender = recordingSender(50);
    const dispatcher = dispatcherWith(sender, { concurrency: 2, perEndpoint: 1 });
    const handed = await storeLeased(1, 40, dispatcher.storedLease());
    const endpointId = handed[0]?.endpoint_id ?? "";
    dispatcher.take(handed, performance.now());
    await vi.waitFor(() => expect(sender.sent.length).toBeGreaterThanOrEqual(2), {
      timeout: 5_000,
      interval: 5,
    });
    await stop(endpointId);
    const stoppedAt = performance.now();
    await vi.waitFor(() => expect(dispatcher.queuedTotal()).toBe(0), { timeout: 5_000, interval: 20 });
    // Without the bound the rest would go on being sent, one every 50 ms, for about 2 s.
    await sleep(500);
    expect(sender.startedAt.filter((at) => at > stoppedAt + 250 + 150)).toEqual([]);
    expect(sender.sent.length).toBeLessThan(handed.length / 2);
    const sentIds = new Set(sender.sent.map((input) => input.eventId));
    const rows = await statuses(handed.map((d) => d.id));
    for (const delivery of handed.filter((d) => !sentIds.has(d.event_id))) {
      expect(rows.get(delivery.id)).toMatchObject({
        status: "dead_letter",
        attempt_count: 0,
        last_error: lastError,
      });
    }
    await dispatcher.stop();
  }

  it("sends nothing more to an endpoint disabled while its deliveries wait, once the bound has passed", async () => {
    await stoppedWhileQueued(
      (endpointId) =>
        withTransaction(db.pool, (tx) => disableEndpoint(tx, endpointId, "requested")).then(() => {}),
      "endpoint disabled",
    );
  });

  it("sends nothing more to an endpoint deleted while its deliveries wait, once the bound has passed", async () => {
    await stoppedWhileQueued(
      (endpointId) =>
        withTransaction(db.pool, async (tx) => {
          await markDeleted(tx, endpointId);
          await deadLetterWaiting(tx, endpointId, "endpoint deleted");
        }),
      "endpoint deleted",
    );
  });

  it("sends a delivery that waited past the bound to its endpoint's url and secret as they are now", async () => {
    const sender = recordingSender();
    const dispatcher = dispatcherWith(sender, { concurrency: 2, perEndpoint: 2 });
    const handed = await storeLeased(1, 2, dispatcher.storedLease());
    const moved = "https://moved.example/hooks";
    const secret = generateSecret();
    const endpointId = handed[0]?.endpoint_id as string;
    const sealed = sealer.seal(endpointId, secret);
    // A PATCH of its url and a rotation of its secret after the deliveries were stored.
    await db.pool.query(
      "UPDATE webhook_endpoints SET url = $2, secret_sealed = $3, secret_key_id = $4 WHERE id = $1",
      [endpointId, moved, sealed.sealed, sealed.kid],
    );
    // Seen held longer ago than the bound: read again before they are launched.
    dispatcher.take(handed, performance.now() - 1_000);
    await vi.waitFor(() => expect(sender.sent).toHaveLength(2), { timeout: 5_000, interval: 10 });
    for (const input of sender.sent) {
      expect(input.url).toBe(moved);
      expect(input.secrets[0]).toBe(secret);
    }
    await dispatcher.stop();
  });

  it("reads again the deliveries of every endpoint past the bound in one statement", async () => {
    const sender = recordingSender();
    const confirms: number[] = [];
    // The pool, counting the confirmations' statements and the deliveries each one reads.
    const pool = new Proxy(db.pool, {
      get(target, property, receiver) {
        if (property !== "query") return Reflect.get(target, property, receiver);
        return (...args: unknown[]) => {
          const [statement] = args;
          if (typeof statement === "object" && statement !== null && "name" in statement) {
            const { name, values } = statement as { name: string; values: string[] };
            if (name === "webhooks.confirm_leases") confirms.push((values[0] ?? "").split(",").length);
          }
          return Reflect.apply(target.query, target, args);
        };
      },
    });
    const dispatcher = createDispatcher({
      pool,
      logger,
      sealer,
      sender,
      schedule: [100],
      timeoutMs: TIMEOUT_MS,
      concurrency: 6,
      perEndpoint: 2,
    });
    const handed = await storeLeased(3, 2, dispatcher.storedLease());
    // Seen held longer ago than the bound, at three endpoints at once.
    dispatcher.take(handed, performance.now() - 1_000);
    await vi.waitFor(() => expect(sender.sent).toHaveLength(6), { timeout: 5_000, interval: 10 });
    expect(confirms).toEqual([6]);
    await dispatcher.stop();
  });

  it("records as not sent a delivery stored while its endpoint was being disabled", async () => {
    const sender = recordingSender();
    const dispatcher = dispatcherWith(sender, { concurrency: 2, perEndpoint: 2 });
    const handed = await storeLeased(1, 3, dispatcher.storedLease());
    // Disabled by a transaction that could not see these deliveries yet: they are still pending.
    await db.pool.query("UPDATE webhook_endpoints SET disabled_at = now() WHERE id = $1", [
      handed[0]?.endpoint_id,
    ]);
    // Seen held longer ago than the bound: read again before they are launched.
    dispatcher.take(handed, performance.now() - 1_000);
    await vi.waitFor(
      async () => {
        const rows = await statuses(handed.map((d) => d.id));
        expect([...rows.values()].map((row) => [row.status, row.last_error])).toEqual(
          handed.map(() => ["dead_letter", "endpoint disabled"]),
        );
      },
      { timeout: 5_000, interval: 20 },
    );
    expect(sender.sent).toEqual([]);
    await dispatcher.stop();
  });
});
