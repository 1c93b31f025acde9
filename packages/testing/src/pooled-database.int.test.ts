import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  connectNats,
  createLogger,
  createOutboxRelay,
  createPool,
  type NatsConnection,
  OUTBOX_MIGRATIONS_DIR,
  type OutboxRelay,
  type Pool,
  pingPool,
  runBeforeCommit,
  type StreamRoute,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import { jetstreamManager } from "@nats-io/jetstream";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase, testServerUrl } from "./database.js";
import { uniqueSuffix } from "./names.js";
import { startPgbouncer, type TestPgbouncer } from "./pgbouncer-server.js";

// The services' DATABASE_URL through a real PgBouncer in transaction mode (as production's
// CloudNativePG Pooler runs it), and what must not go through it: the outbox relay's LISTEN and
// the migrations' session advisory lock, which take DATABASE_DIRECT_URL.
const SCHEMA = "pooled_test";
const SETS = [{ schema: SCHEMA, dirs: [OUTBOX_MIGRATIONS_DIR] }];
const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
const suffix = uniqueSuffix();
const route: StreamRoute = { stream: `POOLED_${suffix}`, root: "events", prefix: `pooled_${suffix}` };
const logger = createLogger("test", "silent");

let pooler: TestPgbouncer;
let nc: NatsConnection;
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  pooler = await startPgbouncer();
  nc = await connectNats(
    { NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:4222" },
    "pooled-test",
    logger,
  );
}, 60_000);
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(route.stream).catch(() => false);
  await nc?.drain();
  await pooler?.close();
}, 60_000);

async function database(): Promise<TestDatabase> {
  const created = await createTestDatabase(SETS);
  cleanups.push(() => created.drop());
  return created;
}

function pool(databaseUrl: string): Pool {
  const created = createPool({ databaseUrl, schema: SCHEMA, max: 3 });
  cleanups.push(() => created.end());
  return created;
}

async function unpublished(on: Pool): Promise<number> {
  const { rows } = await on.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL",
  );
  return rows[0]?.n ?? -1;
}

describe("DATABASE_URL through a transaction pooler", () => {
  it("leaves a pool not ready, saying why, when the pooler does not keep its search_path", async () => {
    const { url } = await database();
    // Straight to PostgreSQL, the schema rides the startup packet and the pool is ready.
    await expect(pingPool(pool(url))).resolves.toBeUndefined();
    // This PgBouncer drops `options` (as CloudNativePG's does, and as any does for a setting it
    // does not track): every query would run on `public`.
    await expect(pingPool(pool(pooler.pooled(url)))).rejects.toThrow(
      /queries run on schema "public", not "pooled_test": .*track_extra_parameters = search_path/,
    );
  }, 30_000);

  it("the outbox relay publishes the rows its process commits through the pooler right after commit", async () => {
    const { url, name } = await database();
    // PostgreSQL 18 reports search_path, and production's PgBouncer tracks it on every server
    // connection it lends (deploy/k8s: track_extra_parameters). The PostgreSQL and PgBouncer
    // here predate that; the database's default search_path stands in for it.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`ALTER DATABASE ${pg.escapeIdentifier(name)} SET search_path TO ${SCHEMA}`);
    await admin.end();

    const pooled = pool(pooler.pooled(url));
    await pingPool(pooled);
    let relay: OutboxRelay | undefined;
    try {
      relay = createOutboxRelay({
        pool: pooled,
        nc,
        routes: [route],
        logger,
        // No sweep within the test: only the hand-over of the commit can publish a row.
        intervalMs: 3_600_000,
        sweepAfterMs: 3_600_000,
      });
      await relay.start();
      // Three rows one after the other, each written through the pooler once the one before
      // was published.
      for (let round = 1; round <= 3; round++) {
        await withTransaction(pooled, (tx) =>
          writeOutboxEvent(tx, { type: "quota.updated", environmentId: ENVIRONMENT, data: { round } }),
        );
        await vi.waitFor(async () => expect(await unpublished(pooled)).toBe(0), {
          timeout: 15_000,
          interval: 50,
        });
      }
    } finally {
      await relay?.stop();
    }
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info(route.stream)).state.messages).toBe(3);
    const third = await jsm.streams.getMessage(route.stream, { seq: 3 });
    expect(third?.json()).toMatchObject({ data: { round: 3 } });
  }, 60_000);

  it("answers a statement run before its commit through the pooler, then its commit or the commit's failure", async () => {
    const { url } = await database();
    const direct = new pg.Client({ connectionString: url });
    await direct.connect();
    cleanups.push(() => direct.end());
    // A table whose commits fail for a `bad` row (a deferred trigger runs at commit).
    await direct.query(`CREATE TABLE ${SCHEMA}.commit_items (n int4 PRIMARY KEY, kind text NOT NULL)`);
    await direct.query(`CREATE FUNCTION ${SCHEMA}.refuse_bad() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.kind = 'bad' THEN RAISE EXCEPTION 'refused at commit'; END IF; RETURN NULL; END $$`);
    await direct.query(`CREATE CONSTRAINT TRIGGER refuse_bad AFTER INSERT ON ${SCHEMA}.commit_items
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${SCHEMA}.refuse_bad()`);
    const client = new pg.Client({ connectionString: pooler.pooled(url) });
    await client.connect();
    cleanups.push(() => client.end());
    const insert = (n: number, kind: string) => ({
      text: `INSERT INTO ${SCHEMA}.commit_items (n, kind) VALUES ($1, $2) RETURNING n`,
      values: [n, kind],
    });
    const good = runBeforeCommit(client, insert(1, "good"));
    expect((await good.result).rows).toEqual([{ n: 1 }]);
    await good.committed;
    const bad = runBeforeCommit(client, insert(2, "bad"));
    expect((await bad.result).rows).toEqual([{ n: 2 }]);
    await expect(bad.committed).rejects.toThrow("refused at commit");
    const kept = await direct.query(`SELECT n FROM ${SCHEMA}.commit_items ORDER BY n`);
    expect(kept.rows).toEqual([{ n: 1 }]);
  }, 30_000);

  it("npm run migrate applies the migrations on DATABASE_DIRECT_URL, not through the pooler", async () => {
    // Two databases that do not exist yet: the one the pooled URL names must stay absent.
    const direct = new URL(testServerUrl());
    direct.pathname = `/evalp_test_direct_${randomBytes(6).toString("hex")}`;
    const pooledName = `evalp_test_pooled_${randomBytes(6).toString("hex")}`;
    const admin = new pg.Client({ connectionString: testServerUrl() });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${direct.pathname.slice(1)} WITH (FORCE)`);
      await admin.end();
    });
    const pooledUrl = new URL(pooler.pooled(testServerUrl()));
    pooledUrl.pathname = `/${pooledName}`;

    const { stdout } = await promisify(execFile)(process.execPath, ["scripts/migrate.mjs"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: pooledUrl.toString(), DATABASE_DIRECT_URL: direct.toString() },
    });
    expect(stdout).toMatch(/^migrated control, platform, interview, webhooks/);

    const migrated = new pg.Client({ connectionString: direct.toString() });
    await migrated.connect();
    try {
      const { rows } = await migrated.query<{ schema: string }>(
        "SELECT nspname AS schema FROM pg_namespace WHERE nspname = ANY($1) ORDER BY nspname",
        [["control", "platform", "interview", "webhooks"]],
      );
      expect(rows.map((row) => row.schema)).toEqual(["control", "interview", "platform", "webhooks"]);
    } finally {
      await migrated.end();
    }
    const absent = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [pooledName]);
    expect(absent.rowCount).toBe(0);
  }, 120_000);
});
