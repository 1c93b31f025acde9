import {
  type Config,
  idempotencyRetention,
  outboxRetention,
  type RetentionTask,
  rowsOlderThan,
} from "@evalp/kit";

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
    idempotencyRetention(),
    rowsOlderThan("sessions", "expires_at", grace),
    rowsOlderThan("invitations", "expires_at", grace),
    rowsOlderThan("password_resets", "expires_at", grace),
  ];
  if (config.RETENTION_AUDIT_EVENTS_DAYS !== undefined) {
    tasks.push(rowsOlderThan("audit_events", "created_at", config.RETENTION_AUDIT_EVENTS_DAYS));
  }
  return tasks;
}
