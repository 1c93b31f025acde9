import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  type NatsConnection,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  type StreamRoute,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
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

describe("createOutboxRelay", () => {
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
      databaseUrl: database.url,
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
