import { execFile } from "node:child_process";
import { promisify } from "node:util";
import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  type NatsConnection,
  OUTBOX_MIGRATIONS_DIR,
  outboxSavepoint,
  type Pool,
  rollBackOutboxTo,
  type StreamRoute,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { uniqueSuffix } from "./names.js";

// The kit's relay against a real outbox and the local JetStream, on a stream of this file's own.
const SETS = [{ schema: "relay_test", dirs: [OUTBOX_MIGRATIONS_DIR] }];
const suffix = uniqueSuffix();
const route: StreamRoute = { stream: `RELAY_${suffix}`, root: "events", prefix: `relay_${suffix}` };
const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const logger = createLogger("test", "silent");

let database: TestDatabase;
let pool: Pool;
let nc: NatsConnection;

beforeAll(async () => {
  database = await createTestDatabase(SETS);
  pool = createPool({ databaseUrl: database.url, schema: "relay_test", max: 3 });
  nc = await connectNats({ NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" }, "relay-test", logger);
});
afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
  await pool?.end();
  await database?.drop();
});

// Each test starts from an empty outbox and stream.
beforeEach(async () => {
  await pool.query("DELETE FROM outbox");
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
});

const unpublished = async () =>
  (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL"))
    .rows[0]?.n;

/** The `Nats-Msg-Id` of every message the stream holds, in stream order. */
async function streamIds(): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(route.stream).catch(() => null);
  const ids: string[] = [];
  if (!info) return ids;
  for (let seq = info.state.first_seq; info.state.messages > 0 && seq <= info.state.last_seq; seq++) {
    const id = (await jsm.streams.getMessage(route.stream, { seq }).catch(() => null))?.header.get(
      "Nats-Msg-Id",
    );
    if (id) ids.push(id);
  }
  return ids;
}

describe("createOutboxRelay, right after commit", () => {
  it("publishes what its process commits through its pool at once, in commit order, and never what rolled back", async () => {
    const relay = createOutboxRelay({
      pool,
      nc,
      routes: [route],
      logger,
      // No sweep within the test: only the hand-over of each commit can publish a row.
      intervalMs: 3_600_000,
      sweepAfterMs: 3_600_000,
    });
    await relay.start();
    try {
      // The streams are ensured by the relay's first pass: rows committed before are the sweep's.
      await vi.waitFor(
        async () =>
          expect(await jetstreamManager(nc).then((jsm) => jsm.streams.info(route.stream))).toBeTruthy(),
        { timeout: 10_000, interval: 50 },
      );
      const committed: string[] = [];
      for (let i = 0; i < 20; i++) {
        const ids = await withTransaction(pool, async (tx) => [
          (
            await writeOutboxEvent(tx, {
              type: "quota.updated",
              environmentId: ENVIRONMENT,
              data: { i, n: 0 },
            })
          ).id,
          (
            await writeOutboxEvent(tx, {
              type: "quota.updated",
              environmentId: ENVIRONMENT,
              data: { i, n: 1 },
            })
          ).id,
        ]);
        committed.push(...ids);
      }
      // A transaction that wrote an event and rolled back, and one whose failed statement made its
      // COMMIT a rollback: neither event exists, neither is published.
      await withTransaction(pool, async (tx) => {
        await writeOutboxEvent(tx, {
          type: "quota.updated",
          environmentId: ENVIRONMENT,
          data: { rolledBack: 1 },
        });
        throw new Error("changed its mind");
      }).catch(() => {});
      await withTransaction(pool, async (tx) => {
        await writeOutboxEvent(tx, {
          type: "quota.updated",
          environmentId: ENVIRONMENT,
          data: { rolledBack: 2 },
        });
        await tx.query("SELECT 1/0").catch(() => {});
      });
      // One that rolled back to a savepoint taken before an event: that event is gone, the
      // one written after the rollback is published.
      committed.push(
        await withTransaction(pool, async (tx) => {
          const mark = outboxSavepoint(tx);
          await tx.query("SAVEPOINT attempt");
          await writeOutboxEvent(tx, {
            type: "quota.updated",
            environmentId: ENVIRONMENT,
            data: { rolledBack: 3 },
          });
          await tx.query("ROLLBACK TO SAVEPOINT attempt");
          rollBackOutboxTo(tx, mark);
          return (
            await writeOutboxEvent(tx, {
              type: "quota.updated",
              environmentId: ENVIRONMENT,
              data: { kept: 1 },
            })
          ).id;
        }),
      );
      await vi.waitFor(async () => expect(await streamIds()).toEqual(committed), {
        timeout: 10_000,
        interval: 50,
      });
      await vi.waitFor(async () => expect(await unpublished()).toBe(0), { timeout: 10_000, interval: 50 });
      expect((await pool.query("SELECT count(*)::int AS n FROM outbox")).rows[0].n).toBe(committed.length);
    } finally {
      await relay.stop();
    }
  });

  it("leaves to the sweep a row whose process died between its commit and its publish", async () => {
    // Another process writes one event through kit, with its relay running, and is killed right
    // after the commit returned: before the end of that event-loop turn, when it would publish.
    const script = `
      import { connectNats, createLogger, createOutboxRelay, createPool, withTransaction, writeOutboxEvent } from "@evalp/kit";
      const logger = createLogger("writer", "silent");
      const pool = createPool({ databaseUrl: process.env.OUTBOX_DB, schema: "relay_test", max: 2 });
      const nc = await connectNats({ NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" }, "writer", logger);
      const relay = createOutboxRelay({ pool, nc, routes: [JSON.parse(process.env.OUTBOX_ROUTE)], logger, intervalMs: 3_600_000 });
      await relay.start();
      await new Promise((resolve) => setTimeout(resolve, 500));
      const event = await withTransaction(pool, (tx) =>
        writeOutboxEvent(tx, { type: "quota.updated", environmentId: process.env.OUTBOX_ENV, data: { orphan: true } }),
      );
      process.stdout.write(event.id);
      process.kill(process.pid, "SIGKILL");
    `;
    const killed = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], {
      env: {
        ...process.env,
        OUTBOX_DB: database.url,
        OUTBOX_ROUTE: JSON.stringify(route),
        OUTBOX_ENV: ENVIRONMENT,
      },
    }).then(
      () => null,
      (error: { signal?: string; stdout?: string }) => error,
    );
    expect(killed?.signal).toBe("SIGKILL");
    const orphan = killed?.stdout ?? "";
    expect(orphan).toMatch(/^[0-9a-f-]{36}$/);
    // Committed, never published.
    expect(await unpublished()).toBe(1);
    expect(await streamIds()).toEqual([]);

    const sweeper = createOutboxRelay({
      pool,
      nc,
      routes: [route],
      logger,
      intervalMs: 100,
      sweepAfterMs: 1_500,
    });
    await sweeper.start();
    try {
      await vi.waitFor(async () => expect(await streamIds()).toEqual([orphan]), {
        timeout: 10_000,
        interval: 50,
      });
      // Not before it was old enough to be nobody else's to publish.
      await vi.waitFor(async () => expect(await unpublished()).toBe(0), { timeout: 10_000, interval: 50 });
      const aged = await pool.query<{ ok: boolean }>(
        "SELECT published_at - created_at >= interval '1.5 seconds' AS ok FROM outbox WHERE id = $1",
        [orphan],
      );
      expect(aged.rows[0]?.ok).toBe(true);
    } finally {
      await sweeper.stop();
    }
  }, 30_000);
});

describe("createOutboxRelay, the sweep", () => {
  it("publishes committed rows in order with Nats-Msg-Id = row id, stamps them, and a repeat is absorbed", async () => {
    const ids = await withTransaction(pool, async (tx) => {
      const written: string[] = [];
      for (let i = 0; i < 300; i++) {
        written.push(
          (await writeOutboxEvent(tx, { type: "quota.updated", environmentId: ENVIRONMENT, data: { i } })).id,
        );
      }
      return written;
    });
    const relay = createOutboxRelay({
      pool,
      nc,
      routes: [route],
      logger,
      // Rows written before it started are the sweep's.
      sweepAfterMs: 0,
      batchSize: 100,
    });
    await relay.start();
    try {
      await vi.waitFor(
        async () => {
          const left = await pool.query("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL");
          expect(left.rows[0].n).toBe(0);
        },
        { timeout: 10_000, interval: 50 },
      );
      const jsm = await jetstreamManager(nc);
      const first = await jsm.streams.getMessage(route.stream, { seq: 1 });
      expect(first?.subject).toBe(`${route.prefix}.${ENVIRONMENT}.quota.updated`);
      expect(first?.header.get("Nats-Msg-Id")).toBe(ids[0]);
      const last = await jsm.streams.getMessage(route.stream, { seq: 300 });
      expect(last?.json()).toMatchObject({ id: ids[299], data: { i: 299 } });

      // A relay that crashed before stamping publishes again: JetStream drops the duplicates.
      await pool.query("UPDATE outbox SET published_at = NULL WHERE id = ANY($1)", [ids.slice(0, 10)]);
      relay.wake();
      await vi.waitFor(
        async () => {
          const left = await pool.query("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL");
          expect(left.rows[0].n).toBe(0);
        },
        { timeout: 10_000, interval: 50 },
      );
      expect((await jsm.streams.info(route.stream)).state.messages).toBe(300);
    } finally {
      await relay.stop();
    }
  });
});
