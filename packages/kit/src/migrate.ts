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
 * Applies every pending migration of each set into its schema, folder by folder in the order
 * given. Replicas racing at start wait for each other on a per-schema advisory lock (held on a
 * connection of its own; node-pg-migrate's own lock would fail instead of waiting), so each
 * migration is applied once and every racer returns when the schema is up to date.
 *
 * The migrations connect as an administrator (a role with CREATEROLE, or the database's owner):
 * each schema's role (`schemaRole`) is created when missing (LOGIN, no password: production sets
 * one, see docs/operations.md), made the owner of the schema and of whatever an earlier version
 * created in it as the administrator, and the migrations then run as that role (`SET ROLE`), so
 * that everything they create is the role's.
 */
export async function migrate(databaseUrl: string, sets: MigrationSet[]): Promise<void> {
  const url = withDefaultUser(databaseUrl);
  const lock = new pg.Client({ connectionString: url });
  await lock.connect();
  try {
    for (const set of sets) {
      await lock.query("SELECT pg_advisory_lock($1)", [advisoryLockId(set.schema)]);
      try {
        const role = schemaRole(set.schema);
        await ensureRole(lock, role);
        await ownSchema(lock, set.schema, role);
        const asRole = new pg.Client({ connectionString: url });
        await asRole.connect();
        try {
          await asRole.query(`SET ROLE ${pg.escapeIdentifier(role)}`);
          for (const dir of set.dirs) {
            await runner({
              dbClient: asRole,
              dir: `${dir}/*.sql`,
              useGlob: true,
              direction: "up",
              schema: set.schema,
              // Created above by the administrator: the role may not create schemas.
              createSchema: false,
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
          await asRole.end();
        }
      } finally {
        await lock.query("SELECT pg_advisory_unlock($1)", [advisoryLockId(set.schema)]);
      }
    }
  } finally {
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
