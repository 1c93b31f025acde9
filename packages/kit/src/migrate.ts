import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import pg from "pg";
import { withDefaultUser } from "./db.js";

/** One service's migrations: the schema it owns and the folders of its `.sql` files. */
export type MigrationSet = { schema: string; dirs: string[] };

/** The outbox table every emitting service has in its own schema (docs/webhooks.md). */
export const OUTBOX_MIGRATIONS_DIR = fileURLToPath(new URL("../migrations/outbox", import.meta.url));

/** The table of Idempotency-Keys every plane records its writes under, in its own schema (docs/idempotency.md). */
export const IDEMPOTENCY_MIGRATIONS_DIR = fileURLToPath(
  new URL("../migrations/idempotency", import.meta.url),
);

/**
 * Where a folder's applied migrations are recorded. Each folder keeps its own history, so the
 * shared outbox and idempotency migrations (numbered on their own) never interleave with a service's and a new
 * kit migration never lands "before" migrations a database already has.
 */
function historyTable(dir: string): string {
  if (dir === OUTBOX_MIGRATIONS_DIR) return "pgmigrations_outbox";
  if (dir === IDEMPOTENCY_MIGRATIONS_DIR) return "pgmigrations_idempotency";
  return "pgmigrations";
}

/**
 * Applies every pending migration of each set into its schema, folder by folder in the order
 * given. Replicas racing at start wait for each other on a per-schema advisory lock (held on a
 * connection of its own; node-pg-migrate's own lock would fail instead of waiting), so each
 * migration is applied once and every racer returns when the schema is up to date.
 */
export async function migrate(databaseUrl: string, sets: MigrationSet[]): Promise<void> {
  const url = withDefaultUser(databaseUrl);
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    for (const set of sets) {
      await lock.query("SELECT pg_advisory_lock($1)", [advisoryLockId(set.schema)]);
      try {
        for (const dir of set.dirs) {
          await runner({
            databaseUrl: url,
            dir: `${dir}/*.sql`,
            useGlob: true,
            direction: "up",
            schema: set.schema,
            createSchema: true,
            migrationsTable: historyTable(dir),
            migrationsSchema: set.schema,
            count: Number.POSITIVE_INFINITY,
            noLock: true,
            checkOrder: true,
            singleTransaction: true,
            log: () => {},
          });
        }
      } finally {
        await lock.query("SELECT pg_advisory_unlock($1)", [advisoryLockId(set.schema)]);
      }
    }
  } finally {
    await lock.end();
  }
}

function advisoryLockId(schema: string): number {
  return createHash("sha256").update(`evalp-migrate:${schema}`).digest().readInt32BE(0);
}

/** Creates the database named in `databaseUrl` when it does not exist (connecting to `postgres`). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(withDefaultUser(databaseUrl));
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""));
  if (!name) throw new Error("DATABASE_URL names no database");
  url.pathname = "/postgres";
  const client = new pg.Client({ connectionString: url.toString() });
  await client.connect();
  try {
    const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (found.rowCount === 0) {
      await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        // Another process created it between the check and the create.
        if (error.code !== "42P04") throw error;
      });
    }
  } finally {
    await client.end();
  }
}
