import { userInfo } from "node:os";
import pg from "pg";

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;
/** Anything that runs a query: the pool or a client inside a transaction. */
export type Queryable = Pick<pg.Pool, "query">;

// Timestamps come back as Date objects and int8 counts as numbers: counts here never pass 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number.parseInt(value, 10));

/**
 * The connection string with libpq's default user (the OS user) filled in when it names none,
 * so that `postgres://127.0.0.1:5432/evalp` means what it means to psql even where `USER` is unset.
 */
export function withDefaultUser(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  if (!url.username) url.username = process.env.PGUSER ?? osUser();
  return url.toString();
}

/** The OS user name, as libpq would take it; a uid with no passwd entry (some containers) has none. */
function osUser(): string {
  try {
    return userInfo().username;
  } catch {
    return "postgres";
  }
}

/**
 * A pool bound to one service's schema through `search_path`, so a service's SQL names its own
 * tables without qualification and cannot read another schema by accident.
 */
export function createPool(options: { databaseUrl: string; schema: string; max: number }): Pool {
  const pool = new pg.Pool({
    connectionString: withDefaultUser(options.databaseUrl),
    max: options.max,
    options: `-c search_path=${options.schema}`,
    // Fail fast when Postgres is down, so the gateway can answer 503 rather than hang.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on("error", () => {});
  return pool;
}

/** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
export async function withTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Readiness probe of a pool: one round trip. */
export async function pingPool(pool: Pool): Promise<void> {
  await pool.query("SELECT 1");
}
