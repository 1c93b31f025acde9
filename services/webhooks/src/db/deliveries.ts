import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { isUuid, newId, notFound, type Queryable, WEBHOOKS_ROOT, writeOutboxMessage } from "@evalp/kit";
import {
  type Attempt,
  AttemptSchema,
  type Delivery,
  DeliverySchema,
} from "@evalp/proto/webhooks/v1/delivery";

export type DeliveryStatus = "pending" | "failed" | "succeeded" | "dead_letter";
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "failed", "succeeded", "dead_letter"];

export type DeliveryRow = {
  id: string;
  environment_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  response_status: number | null;
  delivered_at: Date | null;
  created_at: Date;
};

export const DELIVERY_COLUMNS = `id, environment_id, endpoint_id, event_id, event_type, status, attempt_count,
  next_attempt_at, last_error, response_status, delivered_at, created_at`;

type AttemptRow = {
  attempted_at: Date;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
};

export function deliveryMessage(row: DeliveryRow, attempts: AttemptRow[] = []): Delivery {
  return create(DeliverySchema, {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    attemptCount: row.attempt_count,
    createdAt: timestampFromDate(row.created_at),
    deliveredAt: row.delivered_at ? timestampFromDate(row.delivered_at) : undefined,
    lastError: row.last_error ?? undefined,
    nextAttemptAt: row.next_attempt_at ? timestampFromDate(row.next_attempt_at) : undefined,
    responseStatus: row.response_status ?? undefined,
    status: row.status,
    attempts: attempts.map(attemptMessage),
  });
}

function attemptMessage(row: AttemptRow): Attempt {
  return create(AttemptSchema, {
    attemptedAt: timestampFromDate(row.attempted_at),
    responseStatus: row.response_status ?? undefined,
    error: row.error ?? undefined,
    durationMs: row.duration_ms,
  });
}

/** A delivery of the environment; 404 otherwise. */
export async function requireDelivery(db: Queryable, environmentId: string, deliveryId: string) {
  if (!isUuid(deliveryId)) throw notFound("webhook_delivery");
  const found = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND environment_id = $2`,
    [deliveryId, environmentId],
  );
  const row = found.rows[0];
  if (!row) throw notFound("webhook_delivery");
  return row;
}

export async function attemptsOf(db: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  const found = await db.query<AttemptRow>(
    `SELECT attempted_at, response_status, error, duration_ms FROM webhook_delivery_attempts
     WHERE delivery_id = $1 ORDER BY attempted_at, id`,
    [deliveryId],
  );
  return found.rows;
}

/** The subject dead letters are published on (contract §6), under the webhooks root. */
export const DEAD_LETTER_SUBJECT = `${WEBHOOKS_ROOT}.dead_letter`;

/**
 * Announces a delivery that turned `dead_letter` on `webhooks.dead_letter`, through this
 * service's outbox so that it is published exactly when the status change commits.
 */
export async function writeDeadLetter(db: Queryable, row: DeliveryRow): Promise<void> {
  await writeOutboxMessage(db, {
    type: "webhook.dead_letter",
    subject: DEAD_LETTER_SUBJECT,
    environmentId: row.environment_id,
    payload: {
      delivery_id: row.id,
      endpoint_id: row.endpoint_id,
      event_id: row.event_id,
      event_type: row.event_type,
      environment_id: row.environment_id,
      attempt_count: row.attempt_count,
      last_error: row.last_error,
      response_status: row.response_status,
      timestamp: new Date().toISOString(),
    },
  });
}

/**
 * Turns every waiting delivery (pending or failed) of an endpoint `dead_letter` with `reason`,
 * taking their locks in id order, and announces each. In-flight attempts lose their lease, so
 * they record their attempt but cannot set an outcome.
 */
export async function deadLetterWaiting(db: Queryable, endpointId: string, reason: string): Promise<number> {
  const updated = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries d
     SET status = 'dead_letter', last_error = $2, next_attempt_at = NULL, leased_until = NULL,
         claim_token = NULL, updated_at = clock_timestamp()
     FROM (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status IN ('pending', 'failed')
           ORDER BY id FOR UPDATE) w
     WHERE d.id = w.id
     RETURNING ${DELIVERY_COLUMNS.replace(/(\w+)/g, "d.$1")}`,
    [endpointId, reason],
  );
  for (const row of updated.rows) await writeDeadLetter(db, row);
  return updated.rowCount ?? 0;
}

/** A due delivery leased to this worker, with what its attempt needs. */
export type ClaimedDelivery = {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt_count: number;
  series_start: number;
  next_attempt_at: Date;
  claim_token: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  endpoint_stopped: boolean;
  endpoint_deleted: boolean;
  /** The endpoint has a failure streak, which a success ends. */
  endpoint_failing: boolean;
  body: string;
};

/**
 * Leases due deliveries to one worker: at most `limit`, and per endpoint no more than its free
 * slots, oldest due first. `FOR UPDATE SKIP LOCKED` lets replicas claim side by side without
 * ever taking the same delivery; the lease (`leased_until`, `claim_token`) keeps it theirs while
 * the attempt runs, and lets another worker take it if this one dies.
 */
export async function claimDue(
  pool: Queryable,
  claim: {
    limit: number;
    perEndpoint: number;
    busy: Map<string, number>;
    saturated: string[];
    leaseMs: number;
    token: string;
  },
): Promise<ClaimedDelivery[]> {
  const busyIds = [...claim.busy.keys()];
  const busyFree = busyIds.map((id) => Math.max(0, claim.perEndpoint - (claim.busy.get(id) ?? 0)));
  const claimed = await pool.query<ClaimedDelivery>(
    `WITH candidates AS (
       SELECT id, endpoint_id, next_attempt_at FROM webhook_deliveries
       WHERE status IN ('pending', 'failed') AND next_attempt_at <= now()
         AND (leased_until IS NULL OR leased_until <= now())
         AND NOT (endpoint_id = ANY($1::uuid[]))
       ORDER BY next_attempt_at, id
       LIMIT $2
       FOR UPDATE SKIP LOCKED
     ), ranked AS (
       SELECT c.id, c.next_attempt_at, c.endpoint_id,
              row_number() OVER (PARTITION BY c.endpoint_id ORDER BY c.next_attempt_at, c.id) AS n
       FROM candidates c
     ), chosen AS (
       SELECT r.id FROM ranked r
       LEFT JOIN unnest($3::uuid[], $4::int[]) AS busy (endpoint_id, free) ON busy.endpoint_id = r.endpoint_id
       WHERE r.n <= COALESCE(busy.free, $5)
       ORDER BY r.next_attempt_at, r.id
       LIMIT $6
     )
     UPDATE webhook_deliveries d
     SET leased_until = clock_timestamp() + make_interval(secs => $7::double precision / 1000), claim_token = $8
     FROM chosen, webhook_endpoints e, webhook_events ev
     WHERE d.id = chosen.id AND e.id = d.endpoint_id AND ev.id = d.event_id
     RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.series_start, d.next_attempt_at, d.claim_token,
       e.url, e.secret,
       CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
       (e.disabled_at IS NOT NULL OR e.deleted_at IS NOT NULL) AS endpoint_stopped,
       e.deleted_at IS NOT NULL AS endpoint_deleted, e.failing_since IS NOT NULL AS endpoint_failing, ev.body`,
    [
      claim.saturated,
      claim.limit * 4,
      busyIds,
      busyFree,
      claim.perEndpoint,
      claim.limit,
      claim.leaseMs,
      claim.token,
    ],
  );
  // First attempts to one endpoint go out in the order their events were stored.
  return claimed.rows.sort(
    (a, b) =>
      a.next_attempt_at.getTime() - b.next_attempt_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

/** Milliseconds until the next delivery not leased and not of a saturated endpoint falls due; null: none. */
export async function msUntilNextDue(pool: Queryable, saturated: string[]): Promise<number | null> {
  const found = await pool.query<{ ms: number }>(
    `SELECT (extract(epoch FROM next_attempt_at - clock_timestamp()) * 1000)::float8 AS ms
     FROM webhook_deliveries
     WHERE status IN ('pending', 'failed') AND (leased_until IS NULL OR leased_until <= now())
       AND NOT (endpoint_id = ANY($1::uuid[]))
     ORDER BY next_attempt_at, id LIMIT 1`,
    [saturated],
  );
  const row = found.rows[0];
  return row ? row.ms : null;
}

/** Gives a delivery back untried (shutdown cut its attempt off), to be attempted again at once. */
export async function releaseLease(pool: Queryable, delivery: ClaimedDelivery): Promise<void> {
  await pool.query(
    "UPDATE webhook_deliveries SET leased_until = NULL, claim_token = NULL WHERE id = $1 AND claim_token = $2",
    [delivery.id, delivery.claim_token],
  );
}

/** A plain success to record: its attempt, and the delivery's new status while its lease holds. */
export type Success = {
  delivery: Pick<ClaimedDelivery, "id" | "claim_token">;
  status: number | null;
  attemptedAt: Date;
  durationMs: number;
};

/**
 * Records a group of plain successes in one statement: each attempt row, and each delivery
 * `succeeded` where its lease still holds (counted only, where a replay or disabling took it).
 */
export async function writeSuccesses(db: Queryable, group: Success[]): Promise<void> {
  await db.query(
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::uuid[], $5::timestamptz[], $6::int[])
         AS i (delivery_id, claim_token, response_status, attempt_id, attempted_at, duration_ms)
     ), settled AS (
       UPDATE webhook_deliveries d
       SET status = 'succeeded', next_attempt_at = NULL, last_error = NULL, response_status = i.response_status,
           delivered_at = date_trunc('milliseconds', clock_timestamp()), attempt_count = d.attempt_count + 1,
           leased_until = NULL, claim_token = NULL, updated_at = clock_timestamp()
       FROM input i WHERE d.id = i.delivery_id AND d.claim_token = i.claim_token
       RETURNING d.id
     ), counted AS (
       UPDATE webhook_deliveries d
       SET attempt_count = d.attempt_count + 1, updated_at = clock_timestamp()
       FROM input i WHERE d.id = i.delivery_id AND d.claim_token IS DISTINCT FROM i.claim_token
       RETURNING d.id
     )
     INSERT INTO webhook_delivery_attempts (id, delivery_id, attempted_at, response_status, error, duration_ms)
     SELECT attempt_id, delivery_id, attempted_at, response_status, NULL, duration_ms FROM input`,
    [
      group.map((entry) => entry.delivery.id),
      group.map((entry) => entry.delivery.claim_token),
      group.map((entry) => entry.status),
      group.map(() => newId()),
      group.map((entry) => entry.attemptedAt),
      group.map((entry) => entry.durationMs),
    ],
  );
}

/** One attempt's row. */
export async function insertAttempt(
  db: Queryable,
  deliveryId: string,
  attempt: { attemptedAt: Date; status: number | null; error: string | null; durationMs: number },
): Promise<void> {
  await db.query(
    `INSERT INTO webhook_delivery_attempts (id, delivery_id, attempted_at, response_status, error, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6)`,
    [newId(), deliveryId, attempt.attemptedAt, attempt.status, attempt.error, attempt.durationMs],
  );
}

/** Counts an attempt whose outcome no longer sets the status (its lease was taken away). */
export async function countAttempt(db: Queryable, deliveryId: string): Promise<void> {
  await db.query(
    "UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, updated_at = clock_timestamp() WHERE id = $1",
    [deliveryId],
  );
}

/** A delivery's new status, set only while `delivery`'s lease holds; the row, or null when it no longer did. */
export async function settleLeased(
  db: Queryable,
  delivery: Pick<ClaimedDelivery, "id" | "claim_token">,
  fields: {
    status: DeliveryStatus;
    nextAttemptAt: Date | null;
    lastError: string | null;
    responseStatus: number | null;
    delivered: boolean;
    counted: number;
  },
): Promise<DeliveryRow | null> {
  const updated = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries
     SET status = $3, next_attempt_at = $4, last_error = $5,
         response_status = COALESCE($6, response_status),
         delivered_at = CASE WHEN $7 THEN date_trunc('milliseconds', clock_timestamp()) ELSE delivered_at END,
         attempt_count = attempt_count + $8, leased_until = NULL, claim_token = NULL, updated_at = clock_timestamp()
     WHERE id = $1 AND claim_token = $2
     RETURNING ${DELIVERY_COLUMNS}`,
    [
      delivery.id,
      delivery.claim_token,
      fields.status,
      fields.nextAttemptAt,
      fields.lastError,
      fields.responseStatus,
      fields.delivered,
      fields.counted,
    ],
  );
  return updated.rows[0] ?? null;
}

/** A delivery to insert: one per endpoint and event, due at once. */
export type NewDelivery = {
  id: string;
  environmentId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
};

/** Inserts deliveries due now; one that exists already (a redelivered event) is left as it is. */
export async function insertDeliveries(db: Queryable, deliveries: NewDelivery[]): Promise<void> {
  await db.query(
    `INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, next_attempt_at)
     SELECT d.*, now() FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) AS d
     ON CONFLICT ON CONSTRAINT webhook_deliveries_once DO NOTHING`,
    [
      deliveries.map((d) => d.id),
      deliveries.map((d) => d.environmentId),
      deliveries.map((d) => d.endpointId),
      deliveries.map((d) => d.eventId),
      deliveries.map((d) => d.eventType),
    ],
  );
}
