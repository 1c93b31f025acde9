import { type Config, idempotencyRetention, outboxRetention, type RetentionTask } from "@evalp/kit";

/** What the platform plane deletes (docs/configuration.md#retention): its published outbox rows. */
export function platformRetention(config: Pick<Config, "RETENTION_OUTBOX_DAYS">): RetentionTask[] {
  return [outboxRetention(config.RETENTION_OUTBOX_DAYS), idempotencyRetention()];
}
