import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  type NatsConnection,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  reconcileOutbox,
  routedSubject,
  type StreamRoute,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { uniqueSuffix } from "./names.js";

// reconcileOutbox (docs/operations.md#backup-and-restore) against a real outbox and the local
// JetStream: after a stream lost some messages, only the rows it lacks are published again.
const SETS = [{ schema: "reconcile_test", dirs: [OUTBOX_MIGRATIONS_DIR] }];
const suffix = uniqueSuffix();
const route: StreamRoute = { stream: `RECONCILE_${suffix}`, root: "events", prefix: `reconcile_${suffix}` };
const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const logger = createLogger("test", "silent");

let database: TestDatabase;
let pool: Pool;
let nc: NatsConnection;

beforeAll(async () => {
  database = await createTestDatabase(SETS);
  pool = createPool({ databaseUrl: database.url, schema: "reconcile_test", max: 3 });
  nc = await connectNats(
    { NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
    "reconcile-test",
    logger,
  );
});
afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
  await pool?.end();
  await database?.drop();
});

async function streamIds(): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(route.stream);
  const ids: string[] = [];
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const id = (await jsm.streams.getMessage(route.stream, { seq }).catch(() => null))?.header.get(
      "Nats-Msg-Id",
    );
    if (id) ids.push(id);
  }
  return ids;
}

describe("reconcileOutbox", () => {
  it("has the relay publish again exactly the published rows the stream lacks, once", async () => {
    const since = new Date(Date.now() - 1_000);
    const relay = createOutboxRelay({
      pool,
      nc,
      routes: [route],
      logger,
      intervalMs: 200,
      // The rows cleared are a second old: the sweep takes them at once.
      sweepAfterMs: 0,
    });
    await relay.start();
    try {
      const ids = await withTransaction(pool, async (tx) => {
        const written: string[] = [];
        for (let i = 0; i < 12; i++) {
          written.push(
            (await writeOutboxEvent(tx, { type: "quota.updated", environmentId: ENVIRONMENT, data: { i } }))
              .id,
          );
        }
        return written;
      });
      // Published, and stamped: what reconcileOutbox checks are the rows stamped published.
      await vi.waitFor(
        async () => {
          expect((await streamIds()).sort()).toEqual([...ids].sort());
          const stamped = await pool.query(
            "SELECT 1 FROM outbox WHERE id = ANY($1) AND published_at IS NOT NULL",
            [ids],
          );
          expect(stamped.rowCount).toBe(ids.length);
        },
        { timeout: 10_000, interval: 100 },
      );
      // NATS comes back with a stream that holds the first half only (a new stream: no
      // duplicate window remembers the others).
      const jsm = await jetstreamManager(nc);
      await jsm.streams.delete(route.stream);
      await jsm.streams.add({ name: route.stream, subjects: [`${route.prefix}.>`] });
      const js = jetstream(nc);
      const kept = ids.slice(0, 6);
      const rows = await pool.query<{ id: string; subject: string; payload: string }>(
        "SELECT id, subject, payload::text AS payload FROM outbox WHERE id = ANY($1) ORDER BY created_at, id",
        [kept],
      );
      for (const row of rows.rows)
        await js.publish(routedSubject(route, row.subject), row.payload, { msgID: row.id });

      const result = await reconcileOutbox({ pool, nc, routes: [route], since });
      expect(result.checked).toBe(ids.length);
      expect(new Set(result.republished)).toEqual(new Set(ids.slice(6)));
      await vi.waitFor(async () => expect((await streamIds()).sort()).toEqual([...ids].sort()), {
        timeout: 10_000,
        interval: 100,
      });
      // Nothing is missing any more: a second run changes nothing.
      expect(await reconcileOutbox({ pool, nc, routes: [route], since })).toEqual({
        checked: ids.length,
        republished: [],
      });
      // Rows written before `since` are not looked at.
      expect(
        (await reconcileOutbox({ pool, nc, routes: [route], since: new Date(Date.now() + 60_000) })).checked,
      ).toBe(0);
    } finally {
      await relay.stop();
    }
  });
});
