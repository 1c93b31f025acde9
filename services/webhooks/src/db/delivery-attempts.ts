import {
  idList,
  intList,
  newId,
  preparedStatement,
  type Queryable,
  type TraceCarrier,
  timeList,
} from "@evalp/kit";
import { type SecretEnvelope, secretEnvelopesSql } from "../sealed-secrets.js";
import { DELIVERY_COLUMNS, type DeliveryRow, type DeliveryStatus } from "./deliveries.js";

/*
 * The dispatcher's side of `webhook_deliveries` and `webhook_delivery_attempts`: leases on due
 * deliveries, the attempts made under them and the outcomes they set.
 */

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
  /** Sealed: opened only to sign the attempt. */
  secret: SecretEnvelope;
  previous_secret: SecretEnvelope | null;
  endpoint_stopped: boolean;
  endpoint_deleted: boolean;
  /** The endpoint has a failure streak, which a success ends. */
  endpoint_failing: boolean;
  body: string;
  /** The trace the attempt's span continues. */
  trace_context: TraceCarrier | null;
};

/*
 * The statements that look up a batch of deliveries by id (leases renewed, confirmed, released;
 * successes) say `d.id = ANY($1)` beside their join with the batch: a join alone leaves the
 * planner free to hash the batch and scan the table for it, which it does on a young or
 * unanalyzed table (a fresh worker's, or one whose statistics lag a burst), reading every row, or
 * every waiting one through `webhook_deliveries_due`, for a few dozen. `ANY` makes the primary
 * key's probes the cheap path whatever the statistics say.
 */

/**
 * A delivery still waiting for an attempt (`pending` or `failed`), said so that it cannot be
 * read as `webhook_deliveries_due`'s predicate: where the rows are found by id, that index would
 * only be a scan of every waiting delivery.
 */
const STILL_WAITING = "d.status NOT IN ('succeeded', 'dead_letter')";

/**
 * Leases due deliveries to one worker: at most `limit`, and per endpoint no more than its free
 * slots, oldest due first. The candidates are read without locks and only the chosen are locked
 * (`FOR UPDATE SKIP LOCKED`, due and unleased checked again on the locked row): locking every
 * candidate, four times as many rows as are claimed, wrote a lock into each of them at every
 * round. Replicas claim side by side without ever taking the same delivery (one that loses a row
 * to another claims fewer this round); the lease (`leased_until`, `claim_token`) keeps it theirs
 * while the attempt runs, and lets another worker take it if this one dies.
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
     ), locked AS (
       SELECT w.id FROM webhook_deliveries w
       WHERE w.id = ANY (ARRAY(SELECT id FROM chosen))
         AND w.status IN ('pending', 'failed') AND w.next_attempt_at <= now()
         AND (w.leased_until IS NULL OR w.leased_until <= now())
       FOR UPDATE SKIP LOCKED
     )
     UPDATE webhook_deliveries d
     SET leased_until = clock_timestamp() + make_interval(secs => $7::double precision / 1000), claim_token = $8
     FROM locked, webhook_endpoints e, webhook_events ev
     WHERE d.id = locked.id AND e.id = d.endpoint_id AND ev.id = d.event_id
     RETURNING d.id, d.endpoint_id, d.event_id, d.attempt_count, d.series_start, d.next_attempt_at, d.claim_token,
       e.url, ${secretEnvelopesSql("e")},
       (e.disabled_at IS NOT NULL OR e.deleted_at IS NOT NULL) AS endpoint_stopped,
       e.deleted_at IS NOT NULL AS endpoint_deleted, e.failing_since IS NOT NULL AS endpoint_failing, ev.body,
       d.trace_context`,
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

/** Leases held by this worker, each under the token it was taken with. */
export type HeldLease = Pick<ClaimedDelivery, "id" | "claim_token">;

/** The ids and tokens of `held`, the first two parameters of every statement on held leases. */
function heldLists(held: HeldLease[]): [string, string] {
  return [idList(held.map((lease) => lease.id)), idList(held.map((lease) => lease.claim_token))];
}

/** Prepared: run for every endpoint with a backlog as its leases near their end. */
const RENEW_LEASES = preparedStatement(
  "webhooks.renew_leases",
  `UPDATE webhook_deliveries d
   SET leased_until = clock_timestamp() + make_interval(secs => $3::double precision / 1000)
   FROM unnest($1::uuid[], $2::uuid[]) AS h (id, claim_token)
   WHERE d.id = ANY($1::uuid[]) AND d.id = h.id AND d.claim_token = h.claim_token
   RETURNING d.id`,
);

/** Extends leases this worker still holds to `ms` from now; the ids of those it still held. */
export async function renewLeases(pool: Queryable, held: HeldLease[], ms: number): Promise<Set<string>> {
  const renewed = await pool.query<{ id: string }>(RENEW_LEASES([...heldLists(held), ms]));
  return new Set(renewed.rows.map((row) => row.id));
}

/**
 * A lease confirmed still held: whether the delivery's endpoint stopped (disabled or deleted)
 * meanwhile, and where and with what its endpoint now takes deliveries (a PATCH may have moved
 * it, a rotation changed its secret).
 */
export type ConfirmedLease = Pick<
  ClaimedDelivery,
  "endpoint_stopped" | "endpoint_deleted" | "url" | "secret" | "previous_secret"
>;

/** Prepared: run every few hundred milliseconds per endpoint with a backlog. */
const CONFIRM_LEASES = preparedStatement(
  "webhooks.confirm_leases",
  `SELECT d.id, (e.disabled_at IS NOT NULL OR e.deleted_at IS NOT NULL) AS endpoint_stopped,
     e.deleted_at IS NOT NULL AS endpoint_deleted, e.url, ${secretEnvelopesSql("e")}
   FROM unnest($1::uuid[], $2::uuid[]) AS h (id, claim_token)
   JOIN webhook_deliveries d ON d.id = h.id AND d.claim_token = h.claim_token
   JOIN webhook_endpoints e ON e.id = d.endpoint_id
   WHERE d.id = ANY($1::uuid[]) AND ${STILL_WAITING}`,
);

/**
 * Of leases this worker took, those it still holds on a delivery still waiting (`pending` or
 * `failed`), by id; a disabling or deletion dead-letters the endpoint's waiting deliveries and
 * clears their token, so they are not among them. Read only: it runs every few hundred
 * milliseconds per endpoint with a backlog, where renewing the rows would write each time. The
 * endpoint is read too: for a delivery stored while its endpoint was being disabled (the
 * disabling could not see it yet), and for its url and secrets as they are now.
 */
export async function confirmLeases(
  pool: Queryable,
  held: HeldLease[],
): Promise<Map<string, ConfirmedLease>> {
  const found = await pool.query<ConfirmedLease & { id: string }>(CONFIRM_LEASES(heldLists(held)));
  return new Map(found.rows.map(({ id, ...confirmed }) => [id, confirmed]));
}

/** Gives deliveries back untried (the worker stops before attempting them): claimable at once. */
export async function releaseLeases(pool: Queryable, held: HeldLease[]): Promise<void> {
  await pool.query(
    `UPDATE webhook_deliveries d SET leased_until = NULL, claim_token = NULL
     FROM unnest($1::uuid[], $2::uuid[]) AS h (id, claim_token)
     WHERE d.id = ANY($1::uuid[]) AND d.id = h.id AND d.claim_token = h.claim_token`,
    heldLists(held),
  );
}

/** A plain success to record: its attempt, and the delivery's new status while its lease holds. */
export type Success = {
  delivery: Pick<ClaimedDelivery, "id" | "claim_token">;
  status: number | null;
  attemptedAt: Date;
  durationMs: number;
};

const HELD = "d.claim_token = i.claim_token";

/** Prepared: every group of successes, the plane's most frequent write. */
const WRITE_SUCCESSES = preparedStatement(
  "webhooks.write_successes",
  `WITH input AS (
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::int[], $4::uuid[], $5::timestamptz[], $6::int[])
       AS i (delivery_id, claim_token, response_status, attempt_id, attempted_at, duration_ms)
   ), recorded AS (
     UPDATE webhook_deliveries d
     SET status = CASE WHEN ${HELD} THEN 'succeeded' ELSE d.status END,
         next_attempt_at = CASE WHEN ${HELD} THEN NULL ELSE d.next_attempt_at END,
         last_error = CASE WHEN ${HELD} THEN NULL ELSE d.last_error END,
         response_status = CASE WHEN ${HELD} THEN i.response_status ELSE d.response_status END,
         delivered_at = CASE WHEN ${HELD} THEN date_trunc('milliseconds', clock_timestamp()) ELSE d.delivered_at END,
         leased_until = CASE WHEN ${HELD} THEN NULL ELSE d.leased_until END,
         claim_token = CASE WHEN ${HELD} THEN NULL ELSE d.claim_token END,
         attempt_count = d.attempt_count + 1, updated_at = clock_timestamp()
     FROM input i WHERE d.id = ANY($1::uuid[]) AND d.id = i.delivery_id
     RETURNING d.id
   )
   INSERT INTO webhook_delivery_attempts (id, delivery_id, attempted_at, response_status, error, duration_ms)
   SELECT i.attempt_id, i.delivery_id, i.attempted_at, i.response_status, NULL, i.duration_ms
   FROM input i JOIN recorded r ON r.id = i.delivery_id`,
);

/**
 * Records a group of plain successes in one statement, one update of each delivery's row: the
 * attempt counted, and the delivery `succeeded` where its lease still holds (where a replay or
 * disabling took it, its status is left as they set it); then the attempt row of each delivery so
 * updated. No foreign key keeps an attempt's delivery: the update locks the row, so retention
 * cannot delete it under the attempt, and one retention deleted already gets none.
 *
 * The update is not HOT: `status` is in the predicates of `webhook_deliveries_due` and
 * `_final`, so each success writes a new entry in every index of the table. Measured on a
 * table of 80,000 deliveries stored leased and then succeeded in groups of 40, each group its
 * own transaction: 33 µs per delivery as it is, 25 µs with those two indexes gone (two thirds
 * of the updates then HOT). Getting there takes the waiting deliveries into a table of their
 * own, whose writes on every store and success give back part of the 8 µs, and a schema change
 * over two releases; against the 200 µs of CPU a delivery costs end to end (bench C3), it was
 * left for when the success write is what bounds the plane.
 */
export async function writeSuccesses(db: Queryable, group: Success[]): Promise<void> {
  await db.query(
    WRITE_SUCCESSES([
      idList(group.map((entry) => entry.delivery.id)),
      idList(group.map((entry) => entry.delivery.claim_token)),
      intList(group.map((entry) => entry.status)),
      idList(group.map(() => newId())),
      timeList(group.map((entry) => entry.attemptedAt)),
      intList(group.map((entry) => entry.durationMs)),
    ]),
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

/**
 * Counts an attempt whose outcome no longer sets the status (its lease was taken away); whether
 * the delivery is still there (retention may have deleted it, final for days).
 */
export async function countAttempt(db: Queryable, deliveryId: string): Promise<boolean> {
  const counted = await db.query(
    "UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, updated_at = clock_timestamp() WHERE id = $1",
    [deliveryId],
  );
  return (counted.rowCount ?? 0) > 0;
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
