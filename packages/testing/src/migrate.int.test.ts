import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type MigrationSet, migrate, pendingMigrations } from "@evalp/kit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testServerUrl } from "./database.js";

// The migration runner against a real Postgres (docs/configuration.md#migrations): every file in a
// transaction of its own under lock_timeout and statement_timeout, a file that gave up on a lock
// tried again, no-transaction files for CREATE INDEX CONCURRENTLY, and the read-only check the
// pods of a new release wait on. On a database and a migration folder of this file's own.
const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const name = `evalp_test_migrate_${randomBytes(4).toString("hex")}`;
/** A second database, for the platform's own migrations as the Job and the pods run them. */
const platformName = `${name}_platform`;
const dir = mkdtempSync(join(tmpdir(), "evalp-migrations-"));
const set: MigrationSet = { schema: "runner_test", dirs: [dir] };
let url: string;
let holder: pg.Client;

const write = (file: string, sql: string) => writeFileSync(join(dir, file), sql);
async function query<R extends pg.QueryResultRow>(sql: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, values)).rows;
  } finally {
    await client.end();
  }
}
const applied = async () =>
  (await query<{ name: string }>("SELECT name FROM runner_test.pgmigrations ORDER BY id")).map(
    (row) => row.name,
  );

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.query(`CREATE DATABASE ${platformName}`);
  await admin.end();
  const server = new URL(testServerUrl());
  server.pathname = `/${name}`;
  url = server.toString();
  holder = new pg.Client({ connectionString: url });
  await holder.connect();
});
afterAll(async () => {
  await holder?.end().catch(() => {});
  const admin = new pg.Client({ connectionString: testServerUrl() });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`DROP DATABASE IF EXISTS ${platformName} WITH (FORCE)`);
  await admin.end();
  rmSync(dir, { recursive: true, force: true });
});

describe("migrate", () => {
  it("applies each file in its own transaction, and pendingMigrations lists what the database lacks", async () => {
    write(
      "001_items.sql",
      "-- Up Migration\nCREATE TABLE items (id int PRIMARY KEY);\nINSERT INTO items SELECT generate_series(1, 1000);\n",
    );
    expect(await pendingMigrations(url, [set])).toEqual(["runner_test/001_items.sql"]);
    await migrate(url, [set]);
    expect(await pendingMigrations(url, [set])).toEqual([]);
    expect(await applied()).toEqual(["001_items"]);

    // A failing file leaves the files before it applied, and nothing of its own.
    write("002_flag.sql", "-- Up Migration\nALTER TABLE items ADD COLUMN flag boolean;\n");
    write(
      "003_broken.sql",
      "-- Up Migration\nALTER TABLE items ADD COLUMN note text;\nSELECT no_such_function();\n",
    );
    await expect(migrate(url, [set])).rejects.toThrow(/no_such_function/);
    expect(await applied()).toEqual(["001_items", "002_flag"]);
    const columns = await query<{ column_name: string }>(
      "SELECT column_name FROM information_schema.columns WHERE table_schema = 'runner_test' AND table_name = 'items'",
    );
    expect(columns.map((column) => column.column_name).sort()).toEqual(["flag", "id"]);
    expect(await pendingMigrations(url, [set])).toEqual(["runner_test/003_broken.sql"]);
    write("003_broken.sql", "-- Up Migration\nALTER TABLE items ADD COLUMN note text;\n");
    await migrate(url, [set]);
  });

  it("gives up on a lock after lock_timeout rather than queueing the table's queries, and tries again", async () => {
    // A transaction that reads the table holds a lock every ALTER TABLE must wait for.
    await holder.query("BEGIN; SELECT count(*) FROM runner_test.items");
    write("004_size.sql", "-- Up Migration\nALTER TABLE items ADD COLUMN size int;\n");
    const started = Date.now();
    const refused = await migrate(url, [set], {
      lockTimeoutMs: 200,
      statementTimeoutMs: 10_000,
      lockAttempts: 1,
    }).then(
      () => null,
      (error: { code?: string }) => error,
    );
    expect(refused?.code).toBe("55P03");
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(await applied()).not.toContain("004_size");
    // The runner tries again: its first attempt waits for the lock and gives up, and the holder
    // ends during the pause before the next one, which gets the lock.
    const retried = migrate(url, [set], { lockTimeoutMs: 200, statementTimeoutMs: 10_000, lockAttempts: 5 });
    const waiting = async () =>
      (
        await query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%ADD COLUMN size%'",
        )
      )[0]?.n;
    await vi.waitFor(async () => expect(await waiting()).toBe(1), { timeout: 5_000, interval: 20 });
    await vi.waitFor(async () => expect(await waiting()).toBe(0), { timeout: 5_000, interval: 20 });
    expect(await applied()).not.toContain("004_size");
    await holder.query("COMMIT");
    await retried;
    expect(await applied()).toContain("004_size");
  });

  it("stops a statement that runs past statement_timeout", async () => {
    write("005_slow.sql", "-- Up Migration\nSELECT pg_sleep(3);\n");
    const stopped = await migrate(url, [set], { lockTimeoutMs: 1_000, statementTimeoutMs: 300 }).then(
      () => null,
      (error: { code?: string }) => error,
    );
    expect(stopped?.code).toBe("57014");
    write("005_slow.sql", "-- Up Migration\nSELECT 1;\n");
    await migrate(url, [set]);
  });

  it("runs a no-transaction file outside a transaction: CREATE INDEX CONCURRENTLY, again after an interrupted build", async () => {
    // An earlier, interrupted build left an invalid index of the same name.
    await query("SET search_path TO runner_test; CREATE INDEX items_size ON items (size)");
    await query(
      "UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'runner_test.items_size'::regclass",
    );
    write(
      "006_items_size.sql",
      [
        "-- migrate: no-transaction",
        "-- Up Migration",
        "-- Lookups by size; built without blocking writes.",
        "DROP INDEX CONCURRENTLY IF EXISTS items_size;",
        "CREATE INDEX CONCURRENTLY items_size ON items (size);",
        "",
      ].join("\n"),
    );
    await migrate(url, [set]);
    const [index] = await query<{ valid: boolean }>(
      "SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = 'runner_test.items_size'::regclass",
    );
    expect(index?.valid).toBe(true);
    expect((await applied()).at(-1)).toBe("006_items_size");
    expect(await pendingMigrations(url, [set])).toEqual([]);
  });

  it("migrate.mjs --wait waits for the Job's work and applies nothing: it fails while migrations are pending, passes once they are applied", async () => {
    const server = new URL(testServerUrl());
    server.pathname = `/${platformName}`;
    const env = { ...process.env, DATABASE_URL: server.toString(), MIGRATION_WAIT_TIMEOUT_MS: "300" };
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ["scripts/migrate.mjs", ...args], { cwd: ROOT, env }).then(
        ({ stdout }) => ({ code: 0, out: stdout }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code ?? -1, out: error.stderr ?? "" }),
      );
    const waiting = await run(["--wait"]);
    expect(waiting.code).toBe(1);
    expect(waiting.out).toMatch(/still pending .*control\/001_identity\.sql/);
    // It created nothing: the schemas are the Job's to make.
    const client = new pg.Client({ connectionString: server.toString() });
    await client.connect();
    try {
      const schemas = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = 'control'");
      expect(schemas.rowCount).toBe(0);
      // The Job.
      expect((await run([])).out).toMatch(/^migrated control, platform, interview, webhooks/);
      expect(await run(["--wait"])).toEqual({
        code: 0,
        out: "the database has every migration of this release\n",
      });
    } finally {
      await client.end();
    }
  }, 120_000);
});
