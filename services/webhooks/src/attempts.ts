import { newId, type Pool, type Queryable, withTransaction } from "@evalp/kit";
import { DELIVERY_COLUMNS, type DeliveryRow, writeDeadLetter } from "./db/deliveries.js";
import { disableEndpoint, ENDPOINT_DISABLED } from "./disable.js";
import { type AttemptResult, decideOutcome, type Outcome, shouldAutoDisable } from "./retry.js";

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
  pool: Pool,
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
export async function msUntilNextDue(pool: Pool, saturated: string[]): Promise<number | null> {
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
export async function releaseLease(pool: Pool, delivery: ClaimedDelivery): Promise<void> {
  await pool.query(
    "UPDATE webhook_deliveries SET leased_until = NULL, claim_token = NULL WHERE id = $1 AND claim_token = $2",
    [delivery.id, delivery.claim_token],
  );
}

/**
 * Records one attempt and what follows from it, in one transaction: the endpoint's failure
 * streak (which may disable it), the attempt row and count, and, while this worker still holds
 * the lease, the delivery's new status. `result` null means the delivery was not sent because
 * its endpoint is disabled or deleted. Plain successes go through `createSuccessRecorder`.
 */
export async function recordAttempt(
  pool: Pool,
  delivery: ClaimedDelivery,
  result: (AttemptResult & { aborted?: boolean }) | null,
  schedule: readonly number[],
): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const now = new Date();
    if (!result) {
      const reason = delivery.endpoint_deleted ? "endpoint deleted" : ENDPOINT_DISABLED;
      await settle(tx, delivery, { kind: "dead_letter", reason }, null, null);
      return;
    }
    // The endpoint first: every transaction that touches both locks the endpoint before deliveries.
    const streak = await trackStreak(tx, delivery.endpoint_id, result.ok, now);
    await tx.query(
      `INSERT INTO webhook_delivery_attempts (id, delivery_id, attempted_at, response_status, error, duration_ms)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        newId(),
        delivery.id,
        new Date(now.getTime() - result.durationMs),
        result.status ?? null,
        result.ok ? null : result.error,
        result.durationMs,
      ],
    );
    let outcome = decideOutcome({
      result,
      attemptsInSeries: delivery.attempt_count + 1 - delivery.series_start,
      schedule,
      now,
    });
    if (outcome.kind === "retry" && streak.disabled)
      outcome = { kind: "dead_letter", reason: ENDPOINT_DISABLED };
    const owned = await settle(tx, delivery, outcome, result.ok ? null : result.error, result.status ?? null);
    if (!owned) {
      await tx.query(
        "UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, updated_at = clock_timestamp() WHERE id = $1",
        [delivery.id],
      );
    }
    if (outcome.kind === "gone") await disableEndpoint(tx, delivery.endpoint_id, "gone");
    else if (!result.ok && !streak.disabled && shouldAutoDisable(streak.failingSince, now)) {
      await disableEndpoint(tx, delivery.endpoint_id, "failing");
    }
  });
}

/** Whether an attempt's outcome is a plain success, which `createSuccessRecorder` records. */
export function isPlainSuccess(delivery: ClaimedDelivery, result: AttemptResult | null): boolean {
  return result?.ok === true && !delivery.endpoint_failing;
}

/** Records plain successes (see `isPlainSuccess`); resolves once the success is committed. */
export type SuccessRecorder = (delivery: ClaimedDelivery, result: AttemptResult) => Promise<void>;

type PendingSuccess = {
  delivery: ClaimedDelivery;
  result: AttemptResult;
  attemptedAt: Date;
  done: { resolve: () => void; reject: (error: unknown) => void };
};

/**
 * Records successes in groups, one statement and one commit per group, instead of one commit per
 * delivery: a busy worker finishes many attempts per turn of the event loop, and a commit (a WAL
 * flush) per delivery was what bounded its throughput. A group is whatever succeeded since the
 * last one started; at most one is being written at a time, so groups grow with the load and a
 * lone success is written at once. A success needs neither the endpoint row nor a dead letter:
 * the attempt row, and the delivery's new status while this worker still holds its lease (a
 * replay or a disabling may have taken it; then the attempt counts and its outcome does not).
 */
export function createSuccessRecorder(pool: Pool): SuccessRecorder {
  let queued: PendingSuccess[] = [];
  let writing = false;

  async function flush(): Promise<void> {
    if (writing || queued.length === 0) return;
    writing = true;
    const group = queued;
    queued = [];
    try {
      await writeSuccesses(pool, group);
      for (const entry of group) entry.done.resolve();
    } catch (error) {
      for (const entry of group) entry.done.reject(error);
    } finally {
      writing = false;
      if (queued.length > 0) setImmediate(() => void flush());
    }
  }

  return (delivery, result) =>
    new Promise<void>((resolve, reject) => {
      const attemptedAt = new Date(Date.now() - result.durationMs);
      queued.push({ delivery, result, attemptedAt, done: { resolve, reject } });
      // Successes that complete in this turn of the event loop join the same group.
      if (queued.length === 1) setImmediate(() => void flush());
    });
}

async function writeSuccesses(pool: Pool, group: PendingSuccess[]): Promise<void> {
  await pool.query(
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
      group.map((entry) => entry.result.status ?? null),
      group.map(() => newId()),
      group.map((entry) => entry.attemptedAt),
      group.map((entry) => entry.result.durationMs),
    ],
  );
}

/** Keeps the endpoint's `failing_since`: set by the first failure after a success, cleared by a success. */
async function trackStreak(
  tx: Queryable,
  endpointId: string,
  ok: boolean,
  now: Date,
): Promise<{ failingSince: Date | null; disabled: boolean }> {
  if (ok) {
    await tx.query(
      "UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL",
      [endpointId],
    );
    return { failingSince: null, disabled: false };
  }
  // Locked, so that a disabling decided here and one made by a client cannot deadlock each other.
  const found = await tx.query<{ failing_since: Date | null; disabled: boolean }>(
    `SELECT failing_since, disabled_at IS NOT NULL OR deleted_at IS NOT NULL AS disabled
     FROM webhook_endpoints WHERE id = $1 FOR UPDATE`,
    [endpointId],
  );
  const current = found.rows[0];
  if (current && !current.disabled && current.failing_since === null) {
    await tx.query("UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1", [endpointId, now]);
    current.failing_since = now;
  }
  return { failingSince: current?.failing_since ?? null, disabled: current?.disabled ?? true };
}

/**
 * Sets the delivery's status from an outcome if this worker still holds its lease (a replay, a
 * disabling or an expired lease may have taken it away), counting the attempt when one was made.
 * Returns whether it did.
 */
async function settle(
  tx: Queryable,
  delivery: ClaimedDelivery,
  outcome: Outcome,
  error: string | null,
  status: number | null,
): Promise<boolean> {
  const counted = outcome.kind === "dead_letter" && error === null && status === null ? 0 : 1;
  const fields =
    outcome.kind === "delivered"
      ? { status: "succeeded", next: null, lastError: null, delivered: true }
      : outcome.kind === "retry"
        ? { status: "failed", next: outcome.at, lastError: error, delivered: false }
        : {
            status: "dead_letter",
            next: null,
            lastError: outcome.kind === "gone" ? "HTTP 410" : outcome.reason,
            delivered: false,
          };
  const updated = await tx.query<DeliveryRow>(
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
      fields.next,
      fields.lastError,
      status,
      fields.delivered,
      counted,
    ],
  );
  const row = updated.rows[0];
  if (!row) return false;
  if (row.status === "dead_letter") await writeDeadLetter(tx, row);
  return true;
}
