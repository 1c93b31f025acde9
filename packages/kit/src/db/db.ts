import { userInfo } from "node:os";
import pg from "pg";
import {
  abandonOutboxTransaction,
  beginOutboxTransaction,
  commitOutboxTransaction,
} from "../events/outbox/outbox-handoff.js";
import {
  answerStatement,
  beginRecordingKey,
  holdCommit,
  type KeyInFlight,
  settleHeldCommit,
} from "../idempotency/idempotency-keys.js";
import { runBatch } from "./statement-batch.js";

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

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * A pool that, inside an RPC whose keyed write waits to commit with its answer
 * (idempotency-keys.ts `holdCommit`), commits that write before lending a connection: whatever
 * the RPC queries next sees it. `query` borrows through `connect` too.
 */
class KeyAwarePool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    const settled = settleHeldCommit();
    if (callback) {
      if (!settled) super.connect(callback);
      else
        settled.then(
          () => super.connect(callback),
          (error: Error) => callback(error, undefined, () => {}),
        );
      return undefined;
    }
    return settled ? settled.then(() => super.connect()) : super.connect();
  }
}

/** The schema each pool of createPool is bound to, which its readiness check confirms. */
const poolSchemas = new WeakMap<Pool, string>();

/**
 * A pool bound to one service's schema through `search_path`, so a service's SQL names its own
 * tables without qualification and cannot read another schema by accident. The setting travels
 * in the startup packet's `options`: through a transaction pooler, PgBouncer must track it on
 * every server connection it lends (`track_extra_parameters = search_path`, which works with
 * PostgreSQL 18 and later, the first to report `search_path`); pingPool checks that it does.
 */
export function createPool(options: { databaseUrl: string; schema: string; max: number }): Pool {
  const pool = new KeyAwarePool({
    connectionString: withDefaultUser(options.databaseUrl),
    max: options.max,
    options: `-c search_path=${options.schema}`,
    // Fail fast when Postgres is down, so the gateway can answer 503 rather than hang.
    connectionTimeoutMillis: 5_000,
    idleTimeoutMillis: 30_000,
  });
  // An idle client that loses its connection emits here; without a listener it would crash the process.
  pool.on("error", () => {});
  // A checked-out client has no pool listener: if Postgres ends its session between two queries
  // (a restart sends 57P01 to every session, a transaction may be waiting on NATS or a peer), the
  // 'error' event would be unhandled and kill the process. Handled, the client just turns
  // unqueryable: its next query rejects (mapped to `unavailable`) and the pool drops it on release.
  pool.on("connect", (client) => {
    client.on("error", () => {});
  });
  poolSchemas.set(pool, options.schema);
  return pool;
}

/** Errors of the socket itself: the server is down, restarting, or unreachable. */
const SOCKET_ERRORS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);
/**
 * SQLSTATEs of a server that is going away or not taking connections: class 08 (connection
 * exception), 57P01 admin_shutdown (a fast stop or restart ends every session), 57P02
 * crash_shutdown, 57P03 cannot_connect_now (starting up, shutting down, in recovery), 53300
 * too_many_connections.
 */
const UNAVAILABLE_SQLSTATES = /^(08...|57P0[123]|53300)$/;
/**
 * What node-postgres and its pool throw, with no code, when a connection ends under a query or
 * cannot be had in time. Matched by message because the library gives them nothing else.
 */
const CONNECTION_MESSAGES =
  /^(Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Client was closed and is not queryable)/;

/**
 * True when a database call failed because Postgres could not be reached or dropped the
 * connection, rather than because of the statement: the caller should be told the backend is
 * unavailable (and may retry), not that the platform has a bug.
 */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === "string" && (SOCKET_ERRORS.has(code) || UNAVAILABLE_SQLSTATES.test(code))) return true;
  return CONNECTION_MESSAGES.test(error.message);
}

/**
 * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. In an
 * RPC served under an Idempotency-Key, the RPC's first transaction also records the key
 * (idempotency-keys.ts), so that a retry finds the write committed rather than running it again;
 * that transaction commits once the RPC has its answer, which is stored with the write (or
 * sooner, with the answer, by `commitWith`). The outbox rows a transaction wrote go to the
 * process's relay once COMMIT returned (outbox-handoff.ts).
 *
 * `first`, a statement the transaction runs before anything else, goes in BEGIN's round trip (with
 * the key's record), and `work` is given its result. It runs even where the transaction then
 * records nothing and rolls back (its key found in use, say): a read, or a write the rollback undoes.
 */
export async function withTransaction<T>(
  pool: Pool,
  work: (client: PoolClient, first: pg.QueryResult | undefined) => Promise<T>,
  options: { first?: pg.QueryConfig } = {},
): Promise<T> {
  const client = await pool.connect();
  let held = false;
  // The key this transaction recorded, if any, and whether commitWith ended it.
  const open: OpenTransaction = { key: undefined, committed: false };
  try {
    beginOutboxTransaction(client);
    // BEGIN, with the RPC's key recorded and the first statement run in the same round trip.
    const begun = await beginRecordingKey(client, options.first);
    open.key = begun.key;
    openTransactions.set(client, open);
    const result = await work(client, begun.first);
    // Committed by commitWith. (Work that throws after it leaves its rows to the relay's sweep.)
    if (open.committed) {
      commitOutboxTransaction(pool, client);
      return result;
    }
    // The transaction that recorded the key commits with the RPC's answer (idempotency-keys.ts).
    held = holdCommit(open.key, client, {
      committed: () => commitOutboxTransaction(pool, client),
      abandoned: () => abandonOutboxTransaction(client),
    });
    if (held) return result;
    // A transaction a failed statement aborted answers COMMIT with ROLLBACK, and no error.
    const ended = await client.query("COMMIT");
    if (ended.command === "COMMIT") commitOutboxTransaction(pool, client);
    else abandonOutboxTransaction(client);
    if (open.key) open.key.state = "recorded";
    return result;
  } catch (error) {
    abandonOutboxTransaction(client);
    await client.query("ROLLBACK").catch(() => {});
    // Rolled back, the key is not recorded: a later transaction of the RPC records it.
    if (open.key?.state === "recording") open.key.state = "open";
    throw error;
  } finally {
    openTransactions.delete(client);
    if (!held) client.release();
  }
}

/** A transaction of `withTransaction` while its work runs: the key it recorded, if any. */
type OpenTransaction = { key: KeyInFlight | undefined; committed: boolean };
const openTransactions = new WeakMap<PoolClient, OpenTransaction>();

/**
 * Ends a transaction of `withTransaction` with its last statement: the statement, the RPC's
 * answer where the transaction recorded the RPC's Idempotency-Key (stored as its outcome), and
 * COMMIT go in one round trip (statement-batch.ts). The locks the statement takes are then held
 * for its own run and the commit only, not for a round trip back and the making of the answer,
 * which is what concurrent writes on one row wait for. The statement must fail wherever the
 * transaction must not commit (the COMMIT behind a failed statement never runs; withTransaction
 * rolls back). `answer` is the message the RPC's handler answers, unchanged (an answer that
 * differs is stored after the commit, as without this). Resolves with the statement's result.
 */
export async function commitWith(
  client: PoolClient,
  statement: pg.QueryConfig,
  answer: unknown,
): Promise<pg.QueryResult> {
  const open = openTransactions.get(client);
  if (!open || open.committed) throw new Error("commitWith needs an open transaction of withTransaction");
  const stored = answerStatement(open.key, answer);
  const results = await runBatch(client, [
    statement,
    ...(stored ? [stored.statement] : []),
    { text: "COMMIT" },
  ]);
  open.committed = true;
  if (open.key) {
    open.key.state = "recorded";
    if (stored) open.key.committedAnswer = stored.encoded;
  }
  return results[0] as pg.QueryResult;
}

/**
 * Readiness probe of a pool: one round trip, which also confirms that the pool's queries run on
 * its service's schema. They would not where the schema is not migrated yet, or where
 * DATABASE_URL goes through a pooler that drops `search_path`: every table would be missing, or
 * another schema's.
 */
export async function pingPool(pool: Pool): Promise<void> {
  const { rows } = await pool.query<{ schema: string | null }>("SELECT current_schema() AS schema");
  const expected = poolSchemas.get(pool);
  const found = rows[0]?.schema ?? null;
  if (expected !== undefined && found !== expected) {
    throw new Error(
      `queries run on schema ${JSON.stringify(found)}, not ${JSON.stringify(expected)}: the schema is not migrated, ` +
        "or DATABASE_URL goes through a pooler that does not keep search_path " +
        "(PgBouncer needs track_extra_parameters = search_path, with PostgreSQL 18 or later)",
    );
  }
}
