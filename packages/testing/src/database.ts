import { createHash, randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type MigrationSet, migrate, schemaRole, withDefaultUser } from "@evalp/kit";
import pg from "pg";

/**
 * The server every test database lives on: `TEST_DATABASE_URL`, else the server of
 * `DATABASE_URL` (the one `npm start` uses), else the local default; with its user name filled in.
 */
export function testServerUrl(): string {
  const url = new URL(
    withDefaultUser(
      process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL ?? "postgres://127.0.0.1:5432/postgres",
    ),
  );
  url.pathname = "/postgres";
  return url.toString();
}

function urlFor(database: string): string {
  const url = new URL(testServerUrl());
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: urlFor("postgres") });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** A name that changes whenever any migration does, so a stale template is never reused. */
function templateName(sets: MigrationSet[]): string {
  const hash = createHash("sha256");
  for (const set of sets) {
    // The schema and the role that owns it (the template's objects are that role's).
    hash.update(`schema:${set.schema} owner:${schemaRole(set.schema)}\n`);
    for (const dir of set.dirs) {
      for (const file of readdirSync(dir)
        .filter((name) => name.endsWith(".sql"))
        .sort()) {
        hash.update(`${file}\n${readFileSync(join(dir, file), "utf8")}\n`);
      }
    }
  }
  return `evalp_test_tpl_${hash.digest("hex").slice(0, 16)}`;
}

const TEMPLATE_LOCK = 727_001;

/**
 * Makes the migrated template once per migration state, under an advisory lock so that test
 * files starting together build it once. It is built under a temporary name and renamed when
 * complete, so a clone never sees a half-migrated template.
 */
async function ensureTemplate(sets: MigrationSet[]): Promise<string> {
  const name = templateName(sets);
  await withAdmin(async (admin) => {
    await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
    try {
      const found = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
      if (found.rowCount) return;
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      await migrate(urlFor(building), sets);
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
      // Templates of older migration states are of no further use.
      const stale = await admin.query<{ datname: string }>(
        "SELECT datname FROM pg_database WHERE datname LIKE 'evalp\\_test\\_tpl\\_%' AND datname <> $1",
        [name],
      );
      for (const row of stale.rows) await admin.query(`DROP DATABASE IF EXISTS ${row.datname} WITH (FORCE)`);
    } finally {
      await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK]);
    }
  });
  return name;
}

/** A fresh database of its own for one test file, cloned from the migrated template. */
export type TestDatabase = { url: string; name: string; drop(): Promise<void> };

export async function createTestDatabase(sets: MigrationSet[]): Promise<TestDatabase> {
  const template = await ensureTemplate(sets);
  const name = `evalp_test_${randomBytes(6).toString("hex")}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return {
    url: urlFor(name),
    name,
    drop: () =>
      withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => {}),
  };
}
