import { olderThanDays, type RetentionTask } from "./retention.js";

/**
 * The outbox's rows published more than `days` ago. Once JetStream has acknowledged a row (its
 * duplicate window is minutes), the row only helps to investigate what was published; unpublished
 * rows are never touched.
 */
export function outboxRetention(days: number): RetentionTask {
  return {
    table: "outbox",
    async deleteBatch(db, limit) {
      const deleted = await db.query(
        `DELETE FROM outbox WHERE id IN (
           SELECT id FROM outbox WHERE published_at < ${olderThanDays(1)}
           ORDER BY published_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [days, limit],
      );
      return { outbox: deleted.rowCount ?? 0 };
    },
  };
}
