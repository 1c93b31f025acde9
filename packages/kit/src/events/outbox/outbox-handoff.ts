import pg from "pg";
import type { Pool, PoolClient, Queryable } from "../../db/db.js";
import type { OutboxValues } from "./outbox.js";

/**
 * How a committed outbox row reaches the relay of the process that wrote it without a round trip
 * through Postgres: the writer notes each row it wrote (`noteOutboxRow`), `withTransaction` hands
 * the rows of its transaction over once COMMIT has returned and drops them on ROLLBACK, and the
 * relay started on the same pool (`onCommittedOutboxRows`) publishes them at once. A row whose
 * hand-over never happens (its process died between commit and publish, it was written outside
 * `withTransaction`, or by a process without a relay) is left to the relay's sweep of older rows.
 */
export type CommittedRowsSink = (rows: OutboxValues[]) => void;

/** The relays started on each pool (one per process, but a test may start several). */
const sinks = new WeakMap<Pool, Set<CommittedRowsSink>>();
/** The rows written in each open transaction of `withTransaction`, by its client. */
const pending = new WeakMap<Queryable, OutboxValues[]>();

/** Has `sink` told the rows committed through `pool` from now on; returns its removal. */
export function onCommittedOutboxRows(pool: Pool, sink: CommittedRowsSink): () => void {
  let set = sinks.get(pool);
  if (!set) {
    set = new Set();
    sinks.set(pool, set);
  }
  set.add(sink);
  return () => {
    set.delete(sink);
  };
}

/** Called by `withTransaction` after BEGIN: rows written on `client` wait for the commit. */
export function beginOutboxTransaction(client: PoolClient): void {
  pending.set(client, []);
}

/** Called by `withTransaction` once COMMIT returned: the transaction's rows go to the pool's relays. */
export function commitOutboxTransaction(pool: Pool, client: PoolClient): void {
  const rows = pending.get(client);
  pending.delete(client);
  if (rows && rows.length > 0) handOver(pool, rows);
}

/** Called by `withTransaction` on ROLLBACK (or a failed COMMIT): the rows never existed. */
export function abandonOutboxTransaction(client: PoolClient): void {
  pending.delete(client);
}

/**
 * Notes a row `db` has just written into its outbox. In a transaction of `withTransaction` it
 * waits for the commit; written by the pool itself it committed with its statement and goes to
 * the pool's relays now; on any other client (a transaction this module cannot see end) it is
 * left to the sweep.
 */
export function noteOutboxRow(db: Queryable, row: OutboxValues): void {
  if (db instanceof pg.Pool) {
    handOver(db, [row]);
    return;
  }
  pending.get(db)?.push(row);
}

function handOver(pool: Pool, rows: OutboxValues[]): void {
  const set = sinks.get(pool);
  if (!set) return;
  for (const sink of set) sink(rows);
}

/** Where a savepoint about to be taken on `db` leaves its transaction's rows (see `rollBackOutboxTo`). */
export function outboxSavepoint(db: Queryable): number {
  return pending.get(db)?.length ?? 0;
}

/** After ROLLBACK TO SAVEPOINT: the rows noted since `outboxSavepoint` answered `mark` are gone. */
export function rollBackOutboxTo(db: Queryable, mark: number): void {
  pending.get(db)?.splice(mark);
}
