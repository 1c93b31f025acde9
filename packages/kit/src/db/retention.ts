import type { Logger } from "pino";
import { Counter, type Registry } from "prom-client";
import { createWakeLoop } from "../events/wake-loop.js";
import { METRICS, metricConfig } from "../telemetry/metric-catalog.js";
import { metricOf } from "../telemetry/metrics.js";
import type { Pool, Queryable } from "./db.js";

/** Rows deleted, per table. */
export type DeletedRows = Record<string, number>;

/** One kind of row a service deletes once it is no longer needed; its SQL lives in the service's `db/`. */
export type RetentionTask = {
  /** The table the task deletes from: a batch that deleted `limit` of its rows may have left more. */
  table: string;
  /**
   * Deletes at most `limit` rows of `table` (and the rows that hang on them) in the batch's
   * transaction, skipping rows other transactions hold; resolves with the rows deleted per table.
   */
  deleteBatch(db: Queryable, limit: number): Promise<DeletedRows>;
};

/** What a round did: rows deleted per table, and whether it stopped because another replica runs one. */
export type RetentionRound = { deleted: DeletedRows; skipped: boolean };

export type Retention = {
  /** Runs a round at once, then one every interval, in the background. */
  start(): void;
  /** Finishes the batch in hand, then stops. */
  stop(): Promise<void>;
  /** One round now (tests, and the loop's pass). */
  round(): Promise<RetentionRound>;
};

export type RetentionOptions = {
  /** The service's pool, bound to the schema the tasks delete in. */
  pool: Pool;
  logger: Logger;
  /** The process's registry: `evalp_retention_deleted_rows_total{table}` is counted there. */
  registry?: Registry;
  tasks: RetentionTask[];
  /** Rows per DELETE statement, so that no statement holds many row locks or runs long. */
  batchSize: number;
  intervalMs: number;
};

/** The counter of deleted rows on a registry, made by the first retention runner that uses it. */
function deletedRowsCounter(registry: Registry): Counter<"table"> {
  return metricOf(
    registry,
    METRICS.retentionDeletedRows.name,
    () => new Counter({ ...metricConfig(METRICS.retentionDeletedRows), registers: [registry] }),
  );
}

/**
 * A service's retention (docs/configuration.md#retention): rounds that delete, task by task, batch
 * by batch, the rows past their age. Each batch is one short transaction that first takes a
 * transaction advisory lock on the schema (`pg_try_advisory_xact_lock`, as the outbox relay does,
 * and unlike a session lock it survives a pooler in transaction mode): a replica that does not
 * get it leaves the round to the replica that has it, so replicas never delete side by side, and
 * the locked rows a batch skips (`FOR UPDATE SKIP LOCKED`) are left to a later round rather than
 * waited for, so a batch never deadlocks with the product's own transactions.
 */
export function createRetention(options: RetentionOptions): Retention {
  const log = options.logger.child({ component: "retention" });
  const counter = options.registry ? deletedRowsCounter(options.registry) : null;
  let stopping = false;

  /** One batch of one task; null when another replica holds the schema's retention lock. */
  async function batch(task: RetentionTask): Promise<DeletedRows | null> {
    const client = await options.pool.connect();
    try {
      await client.query("BEGIN");
      const turn = await client.query<{ ok: boolean }>(
        "SELECT pg_try_advisory_xact_lock(hashtextextended('evalp-retention:' || current_schema(), 0)) AS ok",
      );
      if (!turn.rows[0]?.ok) {
        await client.query("ROLLBACK");
        return null;
      }
      const deleted = await task.deleteBatch(client, options.batchSize);
      await client.query("COMMIT");
      return deleted;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async function round(): Promise<RetentionRound> {
    const started = performance.now();
    const deleted: DeletedRows = {};
    let skipped = false;
    tasks: for (const task of options.tasks) {
      while (!stopping) {
        const rows = await batch(task);
        if (!rows) {
          skipped = true;
          break tasks;
        }
        for (const [table, count] of Object.entries(rows)) {
          if (count === 0) continue;
          deleted[table] = (deleted[table] ?? 0) + count;
          counter?.inc({ table }, count);
        }
        // A batch short of the limit found the last of the task's rows.
        if ((rows[task.table] ?? 0) < options.batchSize) break;
      }
    }
    const durationMs = Math.round(performance.now() - started);
    if (skipped) log.debug({ deleted, duration_ms: durationMs }, "retention round left to another replica");
    else log.info({ deleted, duration_ms: durationMs }, "retention round");
    return { deleted, skipped };
  }

  const loop = createWakeLoop({
    logger: log,
    failure: "retention round failed",
    intervalMs: options.intervalMs,
    async pass() {
      await round();
      return undefined;
    },
  });

  return {
    start: () => loop.start(),
    async stop() {
      stopping = true;
      await loop.stop();
    },
    round,
  };
}

/** The age cutoff of a task, in SQL: `$n` days before the transaction's start. */
export function olderThanDays(param: number): string {
  return `now() - $${param}::float8 * interval '1 day'`;
}

/**
 * Rows of `table` (keyed by `id`) whose `column` is more than `days` old, oldest first; a row
 * whose `column` is null is never old enough (an unpublished outbox row). Rows other transactions
 * hold are left to a later round. `table` and `column` are the code's names, never input.
 */
export function rowsOlderThan(table: string, column: string, days: number): RetentionTask {
  return {
    table,
    async deleteBatch(db, limit) {
      const deleted = await db.query(
        `DELETE FROM ${table} WHERE id IN (
           SELECT id FROM ${table} WHERE ${column} < ${olderThanDays(1)}
           ORDER BY ${column} LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [days, limit],
      );
      return { [table]: deleted.rowCount ?? 0 };
    },
  };
}
