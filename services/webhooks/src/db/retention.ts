import {
  type Config,
  idempotencyRetention,
  olderThanDays,
  outboxRetention,
  type RetentionTask,
} from "@evalp/kit";
import { resealBatch, resealTurn, type SecretSealer } from "../sealed-secrets.js";

/**
 * Deliveries in a final state (`succeeded`, `dead_letter`) whose last change is more than `days`
 * old, oldest first, with their attempts, in one statement. A delivery still waiting (`pending`,
 * `failed`) is never touched; one being replayed at that moment is locked and skipped, and once
 * replayed it is no longer final.
 */
function finishedDeliveries(days: number): RetentionTask {
  return {
    table: "webhook_deliveries",
    async deleteBatch(db, limit) {
      const deleted = await db.query<{ deliveries: number; attempts: number }>(
        `WITH doomed AS (
           SELECT id FROM webhook_deliveries
           WHERE status IN ('succeeded', 'dead_letter') AND updated_at < ${olderThanDays(1)}
           ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED
         ), attempts AS (
           DELETE FROM webhook_delivery_attempts WHERE delivery_id IN (SELECT id FROM doomed) RETURNING 1
         ), deliveries AS (
           DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM doomed) RETURNING 1
         )
         SELECT (SELECT count(*) FROM deliveries) AS deliveries, (SELECT count(*) FROM attempts) AS attempts`,
        [days, limit],
      );
      const row = deleted.rows[0];
      return { webhook_deliveries: row?.deliveries ?? 0, webhook_delivery_attempts: row?.attempts ?? 0 };
    },
  };
}

/**
 * Events received more than `days` ago that no delivery refers to any more (or ever did). No
 * foreign key keeps a delivery's event, so the events are locked first and only then checked, in
 * a second statement whose snapshot is taken under those locks: a consumer storing a delivery of
 * one of them either committed before (its delivery is seen and the event kept) or waits on the
 * lock (`KEEP_STORED_EVENT`) and stores the event again once it is deleted.
 */
function orphanEvents(days: number): RetentionTask {
  return {
    table: "webhook_events",
    async deleteBatch(db, limit) {
      const locked = await db.query<{ id: string }>(
        `SELECT e.id FROM webhook_events e
         WHERE e.created_at < ${olderThanDays(1)}
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
         ORDER BY e.created_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [days, limit],
      );
      if (locked.rows.length === 0) return { webhook_events: 0 };
      const deleted = await db.query(
        `DELETE FROM webhook_events e WHERE e.id = ANY($1::uuid[])
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)`,
        [locked.rows.map((row) => row.id)],
      );
      return { webhook_events: deleted.rowCount ?? 0 };
    },
  };
}

/**
 * Rotations' previous secrets past their expiry (`previous_secret_expires_at`, 24 h after the
 * rotation), erased: they stopped signing at that time already (the queries that read them
 * ignore an expired one), and a secret no one uses is not kept. Counted as
 * `webhook_endpoint_previous_secrets`.
 */
function expiredPreviousSecrets(): RetentionTask {
  const table = "webhook_endpoint_previous_secrets";
  return {
    table,
    async deleteBatch(db, limit) {
      const erased = await db.query(
        `UPDATE webhook_endpoints
         SET previous_secret = NULL, previous_secret_sealed = NULL, previous_secret_key_id = NULL,
             previous_secret_expires_at = NULL
         WHERE id IN (
           SELECT id FROM webhook_endpoints WHERE previous_secret_expires_at <= now()
           ORDER BY previous_secret_expires_at LIMIT $1 FOR UPDATE SKIP LOCKED)`,
        [limit],
      );
      return { [table]: erased.rowCount ?? 0 };
    },
  };
}

/**
 * The re-seal of `resealSecrets` again at each round: rows a process of the previous release
 * wrote in plain during a rolling update, or sealed under a key since rotated out of first place.
 * Counted as `webhook_endpoint_secrets_resealed`.
 */
function resealedSecrets(sealer: SecretSealer): RetentionTask {
  const table = "webhook_endpoint_secrets_resealed";
  // Rows no key of this process opens stay so until it restarts with other keys: not read again.
  const unopened = new Set<string>();
  return {
    table,
    async deleteBatch(db, limit) {
      if (!(await resealTurn(db))) return { [table]: 0 };
      const batch = await resealBatch(db, sealer, limit, unopened);
      return { [table]: batch.resealed };
    },
  };
}

/**
 * What the webhooks plane deletes (docs/configuration.md#retention): its published outbox rows,
 * then deliveries in a final state with their attempts, then the events left without deliveries;
 * and in the endpoints it erases expired previous secrets and seals what is not sealed under the
 * current key.
 */
export function webhooksRetention(
  config: Pick<Config, "RETENTION_OUTBOX_DAYS" | "RETENTION_WEBHOOK_DELIVERIES_DAYS">,
  sealer: SecretSealer,
): RetentionTask[] {
  const days = config.RETENTION_WEBHOOK_DELIVERIES_DAYS;
  return [
    outboxRetention(config.RETENTION_OUTBOX_DAYS),
    idempotencyRetention(),
    finishedDeliveries(days),
    orphanEvents(days),
    expiredPreviousSecrets(),
    resealedSecrets(sealer),
  ];
}
