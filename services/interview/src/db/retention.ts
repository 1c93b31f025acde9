import {
  type Config,
  idempotencyRetention,
  olderThanDays,
  outboxRetention,
  type RetentionTask,
  rowsOlderThan,
} from "@evalp/kit";

/**
 * Behavioral events stored more than `days` ago, oldest first. Their batches stay: one small row
 * per batch, and the largest batch ever accepted is the usage of `behavioral_event_batch_size`.
 */
function behavioralEvents(days: number): RetentionTask {
  return rowsOlderThan("behavioral_events", "created_at", days);
}

/**
 * The entries (the transcript) of interviews that ended more than `days` ago; the interview
 * row, its answers and status stay. Only an ended interview (`completed_at` set) is touched.
 */
function interviewEntries(days: number): RetentionTask {
  return {
    table: "interview_entries",
    async deleteBatch(db, limit) {
      const deleted = await db.query(
        `DELETE FROM interview_entries WHERE id IN (
           SELECT e.id FROM interviews i JOIN interview_entries e ON e.interview_id = i.id
           WHERE i.completed_at < ${olderThanDays(1)} AND i.status IN ('completed', 'ended_incomplete')
           ORDER BY i.completed_at LIMIT $2 FOR UPDATE OF e SKIP LOCKED)`,
        [days, limit],
      );
      return { interview_entries: deleted.rowCount ?? 0 };
    },
  };
}

/**
 * What the interview plane deletes (docs/configuration.md#retention): its published outbox rows,
 * behavioral events, and interview entries only when RETENTION_INTERVIEW_ENTRIES_DAYS is set.
 */
export function interviewRetention(
  config: Pick<
    Config,
    "RETENTION_OUTBOX_DAYS" | "RETENTION_BEHAVIORAL_EVENTS_DAYS" | "RETENTION_INTERVIEW_ENTRIES_DAYS"
  >,
): RetentionTask[] {
  const tasks = [
    outboxRetention(config.RETENTION_OUTBOX_DAYS),
    idempotencyRetention(),
    behavioralEvents(config.RETENTION_BEHAVIORAL_EVENTS_DAYS),
  ];
  if (config.RETENTION_INTERVIEW_ENTRIES_DAYS !== undefined) {
    tasks.push(interviewEntries(config.RETENTION_INTERVIEW_ENTRIES_DAYS));
  }
  return tasks;
}
