import { type Pool, type Queryable, withTransaction } from "@evalp/kit";
import { type DeliveryStatus, writeDeadLetter } from "./db/deliveries.js";
import {
  type ClaimedDelivery,
  countAttempt,
  insertAttempt,
  settleLeased,
  writeSuccesses,
} from "./db/delivery-attempts.js";
import { clearFailingSince, lockStreak, setFailingSince } from "./db/endpoints.js";
import { disableEndpoint, ENDPOINT_DISABLED } from "./disable.js";
import { type AttemptResult, decideOutcome, type Outcome, shouldAutoDisable } from "./retry.js";

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
    let outcome = decideOutcome({
      result,
      attemptsInSeries: delivery.attempt_count + 1 - delivery.series_start,
      schedule,
      now,
    });
    if (outcome.kind === "retry" && streak.disabled)
      outcome = { kind: "dead_letter", reason: ENDPOINT_DISABLED };
    const owned = await settle(tx, delivery, outcome, result.ok ? null : result.error, result.status ?? null);
    // The delivery's row is updated (and so locked) before its attempt is written: no foreign key
    // keeps an attempt's delivery, and this way retention can neither delete it under the attempt
    // nor leave an attempt of a delivery it deleted.
    if (owned || (await countAttempt(tx, delivery.id))) {
      await insertAttempt(tx, delivery.id, {
        attemptedAt: new Date(now.getTime() - result.durationMs),
        status: result.status ?? null,
        error: result.ok ? null : result.error,
        durationMs: result.durationMs,
      });
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
      await writeSuccesses(
        pool,
        group.map((entry) => ({
          delivery: entry.delivery,
          status: entry.result.status ?? null,
          attemptedAt: entry.attemptedAt,
          durationMs: entry.result.durationMs,
        })),
      );
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

/** Keeps the endpoint's `failing_since`: set by the first failure after a success, cleared by a success. */
async function trackStreak(
  tx: Queryable,
  endpointId: string,
  ok: boolean,
  now: Date,
): Promise<{ failingSince: Date | null; disabled: boolean }> {
  if (ok) {
    await clearFailingSince(tx, endpointId);
    return { failingSince: null, disabled: false };
  }
  const current = await lockStreak(tx, endpointId);
  if (current && !current.disabled && current.failing_since === null) {
    await setFailingSince(tx, endpointId, now);
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
  const fields: {
    status: DeliveryStatus;
    nextAttemptAt: Date | null;
    lastError: string | null;
    delivered: boolean;
  } =
    outcome.kind === "delivered"
      ? { status: "succeeded", nextAttemptAt: null, lastError: null, delivered: true }
      : outcome.kind === "retry"
        ? { status: "failed", nextAttemptAt: outcome.at, lastError: error, delivered: false }
        : {
            status: "dead_letter",
            nextAttemptAt: null,
            lastError: outcome.kind === "gone" ? "HTTP 410" : outcome.reason,
            delivered: false,
          };
  const row = await settleLeased(tx, delivery, { ...fields, responseStatus: status, counted });
  if (!row) return false;
  if (row.status === "dead_letter") await writeDeadLetter(tx, row);
  return true;
}
