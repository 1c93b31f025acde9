import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  ensureDatabase,
  migrate,
  type NatsConnection,
  OUTBOX_MIGRATIONS_DIR,
  type OutboxRelay,
  type Pool,
  reconcileOutbox,
  type StreamRoute,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import {
  startPostgresServer,
  startRestoredPostgresServer,
  type TestPostgresServer,
  takeBaseBackup,
  uniqueSuffix,
} from "@evalp/testing";
import { jetstreamManager } from "@nats-io/jetstream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";

/**
 * A point-in-time restore, done as docs/operations.md#backup-and-restore says, step by step: a
 * primary archiving its WAL, a base backup, writes, a moment noted, more writes, the primary and
 * the stream lost, the backup restored to that moment, and the outbox reconciled with the stream
 * so that what the stream lost is published again, once. On a Postgres of this file's own and a
 * stream of its own on the local NATS.
 */
const SCHEMA = "restore_test";
const SETS = [{ schema: SCHEMA, dirs: [OUTBOX_MIGRATIONS_DIR] }];
const suffix = uniqueSuffix();
const route: StreamRoute = { stream: `RESTORE_${suffix}`, root: "events", prefix: `restore_${suffix}` };
const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const logger = createLogger("test", "silent");

const archive = mkdtempSync(join(tmpdir(), "evalp-wal-archive-"));
let primary: TestPostgresServer | undefined;
let restored: TestPostgresServer | undefined;
let nc: NatsConnection;
const pools: Pool[] = [];
const relays: OutboxRelay[] = [];

const databaseUrl = (server: TestPostgresServer) => {
  const url = new URL(server.url);
  url.pathname = "/evalp";
  return url.toString();
};

async function one<R extends pg.QueryResultRow>(url: string, sql: string): Promise<R> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows[0] as R;
  } finally {
    await client.end();
  }
}

function relayOn(url: string): { pool: Pool; relay: OutboxRelay } {
  const pool = createPool({ databaseUrl: url, schema: SCHEMA, max: 3 });
  const relay = createOutboxRelay({ pool, nc, routes: [route], logger, intervalMs: 200, sweepAfterMs: 0 });
  pools.push(pool);
  relays.push(relay);
  return { pool, relay };
}

async function write(pool: Pool, count: number, batch: string): Promise<string[]> {
  const ids: string[] = [];
  // One transaction each, as the services write them.
  for (let i = 0; i < count; i++) {
    const event = await withTransaction(pool, (tx) =>
      writeOutboxEvent(tx, { type: "quota.updated", environmentId: ENVIRONMENT, data: { batch, i } }),
    );
    ids.push(event.id);
  }
  return ids;
}

const unpublished = async (pool: Pool) =>
  (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL"))
    .rows[0]?.n;

/** The `Nats-Msg-Id` of every message the stream holds. */
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

beforeAll(async () => {
  // The archive is written by the server's OS user.
  chmodSync(archive, 0o777);
  nc = await connectNats(
    { NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
    "restore-test",
    logger,
  );
});
afterAll(async () => {
  for (const relay of relays) await relay.stop().catch(() => {});
  for (const pool of pools) await pool.end().catch(() => {});
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
  await primary?.close();
  await restored?.close();
  rmSync(archive, { recursive: true, force: true });
});

describe("a point-in-time restore", () => {
  it("brings the database back to the moment noted, and the stream gets again, once, what it lost", async () => {
    // 1. A primary archiving every WAL segment it completes (CloudNativePG: the Barman Cloud
    //    plugin, to the object store), and a base backup (the nightly ScheduledBackup).
    primary = await startPostgresServer({
      settings: {
        wal_level: "replica",
        archive_mode: "on",
        archive_command: `test ! -f ${archive}/%f && cp %p ${archive}/%f`,
      },
    });
    const primaryUrl = databaseUrl(primary);
    await ensureDatabase(primaryUrl);
    await migrate(primaryUrl, SETS);
    const backup = await takeBaseBackup(primary);

    // 2. The platform writes; its relay publishes and stamps. A moment is noted once batch A is
    //    published, then batch B is written and published.
    const before = new Date(Date.now() - 1_000);
    const live = relayOn(primaryUrl);
    await live.relay.start();
    const batchA = await write(live.pool, 10, "A");
    await vi.waitFor(async () => expect(await unpublished(live.pool)).toBe(0), {
      timeout: 15_000,
      interval: 100,
    });
    // As text: microseconds, which a JavaScript Date would cut to the millisecond before it.
    const { moment } = await one<{ moment: string }>(primaryUrl, "SELECT clock_timestamp()::text AS moment");
    const batchB = await write(live.pool, 10, "B");
    await vi.waitFor(async () => expect(await unpublished(live.pool)).toBe(0), {
      timeout: 15_000,
      interval: 100,
    });
    expect(new Set(await streamIds())).toEqual(new Set([...batchA, ...batchB]));

    // Every WAL segment up to now is archived (CloudNativePG switches at least every 5 minutes).
    const { segment } = await one<{ segment: string }>(
      primaryUrl,
      "SELECT pg_walfile_name(pg_switch_wal()) AS segment",
    );
    await vi.waitFor(
      async () => {
        const { archived } = await one<{ archived: string | null }>(
          primaryUrl,
          "SELECT last_archived_wal AS archived FROM pg_stat_archiver",
        );
        expect((archived ?? "") >= segment).toBe(true);
      },
      { timeout: 20_000, interval: 100 },
    );

    // 3. The disaster: the primary is gone, and NATS lost the stream.
    await live.relay.stop();
    await primary.stop("immediate");
    await (await jetstreamManager(nc)).streams.delete(route.stream);

    // 4. The base backup is restored to the moment: recovery.signal, restore_command from the
    //    archive, recovery_target_time, promoted at the target.
    const started = performance.now();
    restored = await startRestoredPostgresServer(backup, {
      restore_command: `cp ${archive}/%f %p`,
      recovery_target_time: moment,
      recovery_target_action: "promote",
    });
    const restoredUrl = databaseUrl(restored);
    await vi.waitFor(
      async () =>
        expect(
          (await one<{ recovery: boolean }>(restoredUrl, "SELECT pg_is_in_recovery() AS recovery")).recovery,
        ).toBe(false),
      { timeout: 60_000, interval: 100 },
    );
    const restoreMs = performance.now() - started;

    // Exactly what was committed by the moment: batch A, published; nothing of batch B.
    const back = relayOn(restoredUrl);
    const rows = await back.pool.query<{ id: string; published: boolean }>(
      "SELECT id, published_at IS NOT NULL AS published FROM outbox ORDER BY created_at, id",
    );
    expect(rows.rows.map((row) => row.id)).toEqual(batchA);
    expect(rows.rows.every((row) => row.published)).toBe(true);

    // 5. The services start on the restored database (their relays create the stream again),
    //    then the outbox is reconciled with the stream from before the moment on: every published
    //    row the stream lacks is published again, with its own id.
    await back.relay.start();
    const reconciled = await reconcileOutbox({ pool: back.pool, nc, routes: [route], since: before });
    expect(reconciled.checked).toBe(batchA.length);
    expect(new Set(reconciled.republished)).toEqual(new Set(batchA));
    await vi.waitFor(async () => expect(await unpublished(back.pool)).toBe(0), {
      timeout: 15_000,
      interval: 100,
    });
    await vi.waitFor(async () => expect((await streamIds()).sort()).toEqual([...batchA].sort()), {
      timeout: 15_000,
      interval: 100,
    });

    // Again: the stream has everything now, so nothing is published twice.
    const again = await reconcileOutbox({ pool: back.pool, nc, routes: [route], since: before });
    expect(again).toEqual({ checked: batchA.length, republished: [] });
    expect(await streamIds()).toHaveLength(batchA.length);

    // The time a restore of this size takes from the backup to a promoted primary: what the
    // RTO of docs/operations.md adds the object store's download and the WAL's volume to.
    console.log(
      `restore: ${Math.round(restoreMs)} ms from start to promotion (${batchA.length + batchB.length} rows written)`,
    );
  }, 120_000);
});
