import { type RetentionTask, rowsOlderThan } from "../../db/retention.js";

/**
 * The outbox's rows published more than `days` ago. Once JetStream has acknowledged a row (its
 * duplicate window is minutes), the row only helps to investigate what was published; unpublished
 * rows are never touched.
 */
export function outboxRetention(days: number): RetentionTask {
  return rowsOlderThan("outbox", "published_at", days);
}
