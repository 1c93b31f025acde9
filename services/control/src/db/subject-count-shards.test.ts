import { randomBytes } from "node:crypto";
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool, migrate, newId, type Pool } from "@evalp/kit";
import { testServerUrl } from "@evalp/testing";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../server.js";
import { SUBJECTS_COUNTED } from "./subject-import.js";

// Migrations 008 to 010 against a real Postgres: a database migrated as the release before the
// shards left it (control's migrations before 008), with subjects counted the old way, then
// migrated to now (009 stops keeping `subject_counts`, 010 drops it).
/** Control's own folder, the last of its migration set's (after kit's outbox and idempotency ones). */
const SERVICE_DIR = migrations.dirs.at(-1) as string;
const SHARDS_MIGRATION = "008_subject_count_shards.sql";
const name = `evalp_test_${randomBytes(6).toString("hex")}`;
const adminUrl = testServerUrl();
const url = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
let before = "";
let pool: Pool;
const organizationId = newId();
const appId = newId();

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** A new environment of the test app, with its quota. */
async function newEnvironment(): Promise<string> {
  const id = newId();
  await pool.query("INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, $3, 'Env')", [
    id,
    appId,
    `env-${id}`,
  ]);
  await pool.query("INSERT INTO quotas (environment_id) VALUES ($1)", [id]);
  return id;
}

/** Inserts `count` subjects into the environment, on `db`. */
async function insertSubjects(db: pg.ClientBase | Pool, environmentId: string, count: number): Promise<void> {
  await db.query(
    `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
     SELECT gen_random_uuid(), $1, 's-' || gen_random_uuid(), 'self_managed', '{}' FROM generate_series(1, $2)`,
    [environmentId, count],
  );
}

/** The environment's shards, and its count as they sum it and as a scan of its subjects has it. */
async function counts(environmentId: string): Promise<{
  shards: Map<number, number>;
  sum: number;
  active: number;
}> {
  const shards = await pool.query<{ shard: number; subjects: string }>(
    "SELECT shard, subjects FROM subject_count_shards WHERE environment_id = $1",
    [environmentId],
  );
  const summed = await pool.query<{ subjects: string }>(SUBJECTS_COUNTED, [environmentId]);
  const active = await pool.query<{ n: string }>(
    "SELECT count(*) AS n FROM subjects WHERE environment_id = $1 AND erased_at IS NULL",
    [environmentId],
  );
  return {
    shards: new Map(shards.rows.map((shard) => [shard.shard, Number(shard.subjects)])),
    sum: Number(summed.rows[0]?.subjects),
    active: Number(active.rows[0]?.n),
  };
}

beforeAll(async () => {
  before = mkdtempSync(join(tmpdir(), "evalp-control-before-"));
  for (const file of readdirSync(SERVICE_DIR).filter((file) => file.endsWith(".sql"))) {
    if (file < SHARDS_MIGRATION) copyFileSync(join(SERVICE_DIR, file), join(before, file));
  }
  await admin(`CREATE DATABASE ${name}`);
  const dirs = migrations.dirs.map((dir) => (dir === SERVICE_DIR ? before : dir));
  await migrate(url, [{ schema: migrations.schema, dirs }]);
  pool = createPool({ databaseUrl: url, schema: migrations.schema, max: 3 });
  await pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'Org')", [organizationId]);
  await pool.query("INSERT INTO apps (id, organization_id, slug, name) VALUES ($1, $2, 'app', 'App')", [
    appId,
    organizationId,
  ]);
});
afterAll(async () => {
  await pool?.end();
  await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  if (before) rmSync(before, { recursive: true, force: true });
});

// In order: the first migrates to now, the second writes on the migrated schema.
describe("subject counts in shards", () => {
  it("start from the counts the previous release kept, in shard 0", async () => {
    const counted = await newEnvironment();
    await insertSubjects(pool, counted, 5);
    await pool.query(
      `UPDATE subjects SET external_id = NULL, profile = '{}', erased_at = now()
       WHERE id = (SELECT id FROM subjects WHERE environment_id = $1 LIMIT 1)`,
      [counted],
    );
    const empty = await newEnvironment();
    // The count as the previous release kept it, per environment.
    const kept = await pool.query<{ subjects: number }>(
      "SELECT subjects::int FROM subject_counts WHERE environment_id = $1",
      [counted],
    );
    expect(kept.rows).toEqual([{ subjects: 4 }]);
    await migrate(url, [migrations]);
    const migrated = await counts(counted);
    expect(migrated).toEqual({
      shards: new Map([[0, 4]]),
      sum: 4,
      active: 4,
    });
    // Dropped by 010, with the function that locked it: no release running now reads either.
    const left = await pool.query<{ row: string | null; locker: string | null }>(
      "SELECT to_regclass('subject_counts')::text AS row, to_regprocedure('locked_subject_count(uuid)')::text AS locker",
    );
    expect(left.rows).toEqual([{ row: null, locker: null }]);
    // An environment with no subjects has no count row before, and no shards after.
    expect((await counts(empty)).shards.size).toBe(0);
  });

  it("are kept by every insert, erasure and delete, each in the shard of the backend that made it", async () => {
    const environmentId = await newEnvironment();
    const sessions = [await pool.connect(), await pool.connect()];
    try {
      const pids: number[] = [];
      for (const [index, session] of sessions.entries()) {
        const found = await session.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
        pids.push(Number(found.rows[0]?.pid));
        await insertSubjects(session, environmentId, 3 + index);
      }
      // One subject erased on the first session, one deleted on the second.
      const [first, second] = sessions as [pg.PoolClient, pg.PoolClient];
      await first.query(
        `UPDATE subjects SET external_id = NULL, profile = '{}', erased_at = now()
         WHERE id = (SELECT id FROM subjects WHERE environment_id = $1 AND erased_at IS NULL LIMIT 1)`,
        [environmentId],
      );
      await second.query(
        "DELETE FROM subjects WHERE id = (SELECT id FROM subjects WHERE environment_id = $1 AND erased_at IS NULL LIMIT 1)",
        [environmentId],
      );
      const kept = await counts(environmentId);
      expect(kept.sum).toBe(5);
      expect(kept.active).toBe(5);
      const [a, b] = pids.map((pid) => pid % 8) as [number, number];
      const expected = new Map<number, number>();
      expected.set(a, (expected.get(a) ?? 0) + 3 - 1);
      expected.set(b, (expected.get(b) ?? 0) + 4 - 1);
      expect(kept.shards).toEqual(expected);
    } finally {
      for (const session of sessions) session.release();
    }
  });
});
