import { type Config, olderThanDays, outboxRetention, type RetentionTask } from "@evalp/kit";

/**
 * Rows of a table whose `column` is more than `days` old, oldest first; rows other transactions
 * hold (a token being redeemed, a session being switched) are left to a later round.
 */
function olderThan(table: string, column: string, days: number): RetentionTask {
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

/**
 * What control deletes (docs/configuration.md#retention): its published outbox rows; sessions,
 * invitations and password resets RETENTION_EXPIRED_GRACE_DAYS past their expiry (until then a
 * late token is still told it expired rather than that it does not exist); audit events only
 * when RETENTION_AUDIT_EVENTS_DAYS is set.
 */
export function controlRetention(
  config: Pick<
    Config,
    "RETENTION_OUTBOX_DAYS" | "RETENTION_EXPIRED_GRACE_DAYS" | "RETENTION_AUDIT_EVENTS_DAYS"
  >,
): RetentionTask[] {
  const grace = config.RETENTION_EXPIRED_GRACE_DAYS;
  const tasks = [
    outboxRetention(config.RETENTION_OUTBOX_DAYS),
    olderThan("sessions", "expires_at", grace),
    olderThan("invitations", "expires_at", grace),
    olderThan("password_resets", "expires_at", grace),
  ];
  if (config.RETENTION_AUDIT_EVENTS_DAYS !== undefined) {
    tasks.push(olderThan("audit_events", "created_at", config.RETENTION_AUDIT_EVENTS_DAYS));
  }
  return tasks;
}
