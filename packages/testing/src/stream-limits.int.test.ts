import { Writable } from "node:stream";
import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  ensureStreams,
  type NatsConnection,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  type StreamRoute,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import { DiscardPolicy, JetStreamApiError, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "./database.js";
import { uniqueSuffix } from "./names.js";

// A stream at its size limit (docs/configuration.md#stream-limits) refuses publishes rather than
// dropping messages; the outbox keeps the rows it could not publish and relays them once space
// frees. On the local JetStream, with a stream of this file's own a few kilobytes large.
const SETS = [{ schema: "stream_limits_test", dirs: [OUTBOX_MIGRATIONS_DIR] }];
const suffix = uniqueSuffix();
const MAX_BYTES = 8 * 1024;
const route: StreamRoute = {
  stream: `LIMITS_${suffix}`,
  root: "events",
  prefix: `limits_${suffix}`,
  maxBytes: MAX_BYTES,
  maxAgeMs: 60 * 60 * 1000,
};
const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const EVENTS = 40;

let database: TestDatabase;
let pool: Pool;
let nc: NatsConnection;

beforeAll(async () => {
  database = await createTestDatabase(SETS);
  pool = createPool({ databaseUrl: database.url, schema: "stream_limits_test", max: 3 });
  nc = await connectNats(
    { NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
    "stream-limits-test",
    createLogger("test", "silent"),
  );
});
afterAll(async () => {
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
  await pool?.end();
  await database?.drop();
});

async function unpublished(): Promise<string[]> {
  const rows = await pool.query<{ id: string }>(
    "SELECT id FROM outbox WHERE published_at IS NULL ORDER BY created_at, id",
  );
  return rows.rows.map((row) => row.id);
}

/** The `Nats-Msg-Id` of every message the stream holds, in stream order. */
async function streamIds(): Promise<string[]> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(route.stream);
  const ids: string[] = [];
  for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq++) {
    const message = await jsm.streams.getMessage(route.stream, { seq }).catch(() => null);
    const id = message?.header.get("Nats-Msg-Id");
    if (id) ids.push(id);
  }
  return ids;
}

describe("a stream at its max_bytes", () => {
  it("is created with the route's limits and discard policy new, and an existing one is brought to them", async () => {
    const name = `LIMITS_UPDATE_${suffix}`;
    const jsm = await jetstreamManager(nc);
    // A stream of before the limits: discard old, no size limit.
    await jsm.streams.add({
      name,
      subjects: [`limits_update_${suffix}.>`],
      discard: DiscardPolicy.Old,
      max_age: nanos(7 * 24 * 3600 * 1000),
    });
    try {
      await ensureStreams(nc, [{ ...route, stream: name, prefix: `limits_update_${suffix}` }]);
      const config = (await jsm.streams.info(name)).config;
      expect(config).toMatchObject({
        max_bytes: MAX_BYTES,
        max_age: nanos(60 * 60 * 1000),
        discard: DiscardPolicy.New,
      });
    } finally {
      await jsm.streams.delete(name);
    }
  });

  it("refuses publishes; the outbox keeps the rows it could not publish and relays them once space frees", async () => {
    const failures: string[] = [];
    const logger = createLogger(
      "test",
      "warn",
      new Writable({
        write(chunk, _encoding, done) {
          failures.push(String(chunk));
          done();
        },
      }),
    );
    // About 300 bytes a message: far more than 8 KiB in all.
    const written = await withTransaction(pool, async (tx) => {
      const ids: string[] = [];
      for (let i = 0; i < EVENTS; i++) {
        ids.push(
          (await writeOutboxEvent(tx, { type: "quota.updated", environmentId: ENVIRONMENT, data: { i } })).id,
        );
      }
      return ids;
    });
    const relay = createOutboxRelay({
      pool,
      nc,
      routes: [route],
      logger,
      // Rows written before it started are the sweep's.
      sweepAfterMs: 0,
      batchSize: 5,
      intervalMs: 200,
    });
    await relay.start();
    try {
      // The relay fills the stream, then JetStream refuses (10077, "maximum bytes exceeded").
      await vi.waitFor(() => expect(failures.join("\n")).toMatch(/maximum bytes exceeded/i), {
        timeout: 15_000,
        interval: 100,
      });
      const jsm = await jetstreamManager(nc);
      const full = await jsm.streams.info(route.stream);
      expect(full.state.bytes).toBeLessThanOrEqual(MAX_BYTES);
      expect(full.state.messages).toBeGreaterThan(0);
      expect(full.state.messages).toBeLessThan(EVENTS);
      // A publish of anyone else is refused too, with JetStream's error.
      const refused = await jetstream(nc)
        .publish(`${route.prefix}.${ENVIRONMENT}.quota.updated`, "x".repeat(512))
        .then(
          () => null,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(JetStreamApiError);
      expect((refused as JetStreamApiError).code).toBe(10077);

      // Nothing lost: what the stream holds is exactly what the outbox stamped, the rest waits
      // unpublished in the outbox.
      const waiting = await unpublished();
      expect(waiting.length).toBeGreaterThan(0);
      const inStream = await streamIds();
      expect(new Set([...inStream, ...waiting])).toEqual(new Set(written));
      expect(inStream.length + waiting.length).toBe(EVENTS);

      // Space frees (messages age out or are removed): the relay publishes the rest by itself.
      await jsm.streams.purge(route.stream);
      await vi.waitFor(async () => expect(await unpublished()).toEqual([]), {
        timeout: 20_000,
        interval: 100,
      });
      const relayed = await streamIds();
      expect(new Set(relayed)).toEqual(new Set(waiting));
      expect(relayed).toHaveLength(waiting.length);
    } finally {
      await relay.stop();
    }
  }, 60_000);
});
