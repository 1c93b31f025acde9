import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { basename } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { runner } from "node-pg-migrate";
import pg from "pg";
import { withDefaultUser } from "./db.js";

/** One service's migrations: the schema it owns and the folders of its `.sql` files. */
export type MigrationSet = { schema: string; dirs: string[] };

/** The outbox table every emitting service has in its own schema (docs/webhooks.md). */
export const OUTBOX_MIGRATIONS_DIR = fileURLToPath(new URL("../../migrations/outbox", import.meta.url));

/** The table of Idempotency-Keys every plane records its writes under, in its own schema (docs/idempotency.md). */
export const IDEMPOTENCY_MIGRATIONS_DIR = fileURLToPath(
  new URL("../../migrations/idempotency", import.meta.url),
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
 * The Postgres role that owns a service's schema, and the only one the service connects as
 * (docs/operations.md#database-roles): it has rights on its own schema and on no other, so code
 * running in one plane cannot read or write another plane's tables.
 */
export function schemaRole(schema: string): string {
  return `evalp_${schema}`;
}

/**
 * The same database as `databaseUrl`, as the role of `schema` (no password: for a server that
 * trusts local connections, development's and the tests'; production gives each service a URL
 * with its role's password).
 */
export function schemaRoleUrl(databaseUrl: string, schema: string): string {
  const url = new URL(databaseUrl);
  url.username = schemaRole(schema);
  url.password = "";
  return url.toString();
}

/**
 * How long a migration may wait for a lock, and run, before it gives up (docs/configuration.md#migrations).
 * A DDL statement that waits for a lock (an ALTER TABLE behind a long transaction) queues every
 * query of that table behind it: better to give up after a few seconds and try again.
 */
export type MigrationTimeouts = {
  lockTimeoutMs: number;
  statementTimeoutMs: number;
  /** Times a migration that gave up on a lock is tried (pauses of 1, 2, 4, … s between). */
  lockAttempts?: number;
};

export const DEFAULT_MIGRATION_TIMEOUTS: MigrationTimeouts = {
  lockTimeoutMs: 5_000,
  statementTimeoutMs: 60_000,
  lockAttempts: 5,
};

/**
 * The first line of a migration that runs outside a transaction: `CREATE INDEX CONCURRENTLY` on
 * a table that already holds data (a transaction would refuse it). Such a file holds only
 * statements that may run on their own, each ending with `;` at the end of a line, and no down
 * section; it runs without a statement timeout (an index build takes as long as its table needs,
 * blocking no writes), and an interrupted run is simply run again, so each
 * `CREATE INDEX CONCURRENTLY x` follows a `DROP INDEX CONCURRENTLY IF EXISTS x` (an interrupted
 * build leaves an invalid index behind). `scripts/lint-migrations.mjs` checks all of it.
 */
export const NO_TRANSACTION_MARKER = "-- migrate: no-transaction";

/** Whether a migration file's text asks to run outside a transaction (its first non-empty line is the marker). */
export function isNoTransaction(sql: string): boolean {
  return sql.trimStart().startsWith(NO_TRANSACTION_MARKER);
}

/** The statements of a no-transaction migration: split at `;` ending a line, comments and blanks dropped. */
export function statementsOf(sql: string): string[] {
  const up = sql.split(/^\s*--[\s-]*down\s+migration/im)[0] ?? "";
  return up
    .split(/;[ \t]*$/m)
    .map((statement) =>
      statement
        .split("\n")
        .filter((line) => !/^\s*--/.test(line))
        .join("\n")
        .trim(),
    )
    .filter((statement) => statement.length > 0);
}

/**
 * Applies every pending migration of each set into its schema, folder by folder in the order
 * given, each file in a transaction of its own (so a long run holds each file's locks only while
 * that file runs), or outside any for a no-transaction file (NO_TRANSACTION_MARKER). Every
 * statement runs with the timeouts' `lock_timeout` and `statement_timeout`; a file that gave up
 * waiting for a lock is rolled back and tried again, a few times, before the run fails.
 * Concurrent runs wait for each other on a per-schema advisory lock (held on a connection of its
 * own; node-pg-migrate's own lock would fail instead of waiting), so each migration is applied
 * once and every racer returns when the schema is up to date. In production one Job runs it per
 * rollout (deploy/k8s/README.md#migrations); the pods only wait for it (`pendingMigrations`).
 *
 * The migrations connect as an administrator (a role with CREATEROLE, or the database's owner):
 * each schema's role (`schemaRole`) is created when missing (LOGIN, no password: production sets
 * one, see docs/operations.md), made the owner of the schema and of whatever an earlier version
 * created in it as the administrator, and the migrations then run as that role (`SET ROLE`), so
 * that everything they create is the role's.
 */
export async function migrate(
  databaseUrl: string,
  sets: MigrationSet[],
  timeouts: MigrationTimeouts = DEFAULT_MIGRATION_TIMEOUTS,
): Promise<void> {
  const url = withDefaultUser(databaseUrl);
  const lock = new pg.Client({ connectionString: url });
  // The runner's own session: every statement of a migration under the timeouts.
  const client = new pg.Client({
    connectionString: url,
    lock_timeout: timeouts.lockTimeoutMs,
    statement_timeout: timeouts.statementTimeoutMs,
  });
  await lock.connect();
  try {
    await client.connect();
    for (const set of sets) {
      await lock.query("SELECT pg_advisory_lock($1)", [advisoryLockId(set.schema)]);
      try {
        const role = schemaRole(set.schema);
        await ensureRole(lock, role);
        await ownSchema(lock, set.schema, role);
        // Everything the migrations create is the schema role's (docs/operations.md#database-roles).
        await client.query(`SET ROLE ${pg.escapeIdentifier(role)}`);
        try {
          for (const dir of set.dirs) await migrateFolder(client, set.schema, dir, timeouts);
        } finally {
          await client.query("RESET ROLE");
        }
      } finally {
        await lock.query("SELECT pg_advisory_unlock($1)", [advisoryLockId(set.schema)]);
      }
    }
  } finally {
    await client.end().catch(() => {});
    await lock.end();
  }
}

/**
 * Creates a schema's role when it does not exist (roles are the cluster's, shared by all its
 * databases: another database's migrations may have made it) and lets the administrator act as it.
 */
async function ensureRole(admin: pg.Client, role: string): Promise<void> {
  const found = await admin.query("SELECT 1 FROM pg_roles WHERE rolname = $1", [role]);
  if (found.rowCount === 0) {
    await admin.query(`CREATE ROLE ${pg.escapeIdentifier(role)} LOGIN`).catch((error: { code?: string }) => {
      // Another database's migrations created it meanwhile (42710, or 23505 in the catalog's index).
      if (error.code !== "42710" && error.code !== "23505") throw error;
    });
  }
  const member = await admin.query("SELECT pg_has_role(current_user, $1, 'MEMBER') AS can", [role]);
  if (!member.rows[0]?.can) await admin.query(`GRANT ${pg.escapeIdentifier(role)} TO CURRENT_USER`);
}

/**
 * Makes `role` the owner of `schema` and of every table, view, sequence, function and type in
 * it: a database migrated before the roles existed has them all owned by the administrator.
 * A sequence that belongs to a column follows its table.
 */
async function ownSchema(admin: pg.Client, schema: string, role: string): Promise<void> {
  const s = pg.escapeIdentifier(schema);
  const r = pg.escapeIdentifier(role);
  await admin.query(`CREATE SCHEMA IF NOT EXISTS ${s} AUTHORIZATION ${r}`);
  await admin.query(`ALTER SCHEMA ${s} OWNER TO ${r}`);
  const owned = await admin.query<{ statement: string }>(
    `SELECT format('ALTER %s %I.%I OWNER TO %I',
              CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                             WHEN 'S' THEN 'SEQUENCE' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END,
              n.nspname, c.relname, $2::text) AS statement
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
        AND c.relowner <> (SELECT oid FROM pg_roles WHERE rolname = $2)
        AND NOT (c.relkind = 'S' AND EXISTS (
              SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype IN ('a', 'i')))
     UNION ALL
     SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, $2::text)
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND p.proowner <> (SELECT oid FROM pg_roles WHERE rolname = $2)
     UNION ALL
     SELECT format('ALTER TYPE %s OWNER TO %I', t.oid::regtype, $2::text)
       FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
      WHERE n.nspname = $1 AND t.typtype IN ('e', 'd', 'r', 'm')
        AND t.typowner <> (SELECT oid FROM pg_roles WHERE rolname = $2)`,
    [schema, role],
  );
  for (const { statement } of owned.rows) await admin.query(statement);
}

async function migrateFolder(
  client: pg.Client,
  schema: string,
  dir: string,
  timeouts: MigrationTimeouts,
): Promise<void> {
  const options = {
    dbClient: client,
    dir: `${dir}/*.sql`,
    useGlob: true,
    direction: "up" as const,
    schema,
    // Created by the administrator (ownSchema): the schema's role may not create schemas.
    createSchema: false,
    migrationsTable: historyTable(dir),
    migrationsSchema: schema,
    noLock: true,
    checkOrder: true,
    singleTransaction: false,
    log: () => {},
  };
  for (;;) {
    // What is pending, in order (a dry run applies nothing).
    const pending = await runner({ ...options, count: Number.POSITIVE_INFINITY, dryRun: true });
    const next = pending[0];
    if (!next) return;
    const sql = await readFile(next.path, "utf8");
    await withLockRetries(timeouts.lockAttempts ?? 1, async () => {
      try {
        if (isNoTransaction(sql)) {
          await applyWithoutTransaction(client, schema, options.migrationsTable, next.name, sql, timeouts);
        } else {
          await runner({ ...options, count: 1 });
        }
      } catch (error) {
        // The runner leaves a failed file's transaction open (aborted): end it before anything else.
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      }
    });
  }
}

async function applyWithoutTransaction(
  client: pg.Client,
  schema: string,
  table: string,
  name: string,
  sql: string,
  timeouts: MigrationTimeouts,
): Promise<void> {
  await client.query(`SET search_path TO ${pg.escapeIdentifier(schema)}`);
  await client.query("SET statement_timeout = 0");
  try {
    for (const statement of statementsOf(sql)) await client.query(statement);
    await client.query(
      `INSERT INTO ${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)} (name, run_on) VALUES ($1, NOW())`,
      [name],
    );
  } finally {
    await client.query(`SET statement_timeout = ${Math.trunc(timeouts.statementTimeoutMs)}`);
  }
}

/** Runs `apply` again, after a pause, while it gives up on a lock (SQLSTATE 55P03, lock_timeout). */
async function withLockRetries(attempts: number, apply: () => Promise<void>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await apply();
    } catch (error) {
      if ((error as { code?: string }).code !== "55P03" || attempt >= attempts) throw error;
      await sleep(500 * 2 ** attempt);
    }
  }
}

/**
 * The migrations of the sets that the database has not applied yet, as `<schema>/<file>` (empty:
 * the schema is what this code expects). Reads the history tables only, through any connection
 * (a pooler's too); applies nothing. What a pod of a new release waits on while the migration
 * Job runs.
 */
export async function pendingMigrations(databaseUrl: string, sets: MigrationSet[]): Promise<string[]> {
  const client = new pg.Client({ connectionString: withDefaultUser(databaseUrl) });
  await client.connect();
  try {
    const pending: string[] = [];
    for (const set of sets) {
      for (const dir of set.dirs) {
        const table = `${pg.escapeIdentifier(set.schema)}.${pg.escapeIdentifier(historyTable(dir))}`;
        const exists = await client.query<{ found: string | null }>("SELECT to_regclass($1) AS found", [
          table,
        ]);
        const applied = exists.rows[0]?.found
          ? new Set(
              (await client.query<{ name: string }>(`SELECT name FROM ${table}`)).rows.map((row) => row.name),
            )
          : new Set<string>();
        const files = (await readdir(dir)).filter((file) => file.endsWith(".sql")).sort();
        for (const file of files) {
          if (!applied.has(basename(file, ".sql"))) pending.push(`${set.schema}/${file}`);
        }
      }
    }
    return pending;
  } finally {
    await client.end();
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
