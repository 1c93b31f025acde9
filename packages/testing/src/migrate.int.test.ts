import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type MigrationSet, migrate, pendingMigrations } from "@evalp/kit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testServerUrl } from "./database.js";

// The migration runner against a real Postgres (docs/configuration.md#migrations): every file in a
// transaction of its own under lock_timeout and statement_timeout, a file that gave up on a lock
// tried again, no-transaction files for CREATE INDEX CONCURRENTLY, and the read-only check the
// pods of a new release wait on. On a database and a migration folder of this file's own.
const name = `evalp_test_migrate_${randomBytes(4).toString("hex")}`;
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
    // While the runner retries, the holder ends: the next attempt gets the lock.
    const retried = migrate(url, [set], { lockTimeoutMs: 200, statementTimeoutMs: 10_000, lockAttempts: 5 });
    setTimeout(() => void holder.query("COMMIT"), 300);
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
});
