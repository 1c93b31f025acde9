/** Delays after each failed attempt (docs/webhooks.md): 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const CONTRACT_SCHEDULE_MS: readonly number[] = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];

/** Each delay is drawn within ±20 % of the schedule, so retries of many deliveries spread out. */
export const JITTER = 0.2;
/** A receiver's `Retry-After` may push an attempt at most this much past the schedule. */
export const RETRY_AFTER_CAP_MS = 2 * 3_600_000;
/** An endpoint whose deliveries have all failed this long is disabled (docs/webhooks.md). */
export const AUTO_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
/** …provided its first failure is at least this long before the latest one. */
export const AUTO_DISABLE_MIN_SPAN_MS = 12 * 3_600_000;

/** `WEBHOOK_RETRY_SCHEDULE_MS` ("200,400") or the contract's schedule. */
export function parseSchedule(value: string | undefined): number[] {
  if (value === undefined || value.trim() === "") return [...CONTRACT_SCHEDULE_MS];
  return value.split(",").map((part) => {
    const ms = Number.parseInt(part.trim(), 10);
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`invalid retry delay ${part}`);
    return ms;
  });
}

/** What one attempt came to, as the sender saw it. */
export type AttemptResult =
  | { ok: true; status: number; durationMs: number }
  | {
      ok: false;
      /** The response status when there was a response. */
      status?: number;
      /** What `last_error` says: `HTTP 503`, `timeout after 10000 ms`, `connection refused`… */
      error: string;
      /** From `Retry-After` on a 429 or 503. */
      retryAfterMs?: number;
      durationMs: number;
    };

/** What becomes of a delivery after an attempt (STYLE: outcomes as a discriminated union). */
export type Outcome =
  | { kind: "delivered" }
  | { kind: "retry"; at: Date }
  | { kind: "dead_letter"; reason: string }
  /** `410 Gone`: the delivery is dead-lettered and its endpoint disabled. */
  | { kind: "gone" };

/**
 * The next step of a delivery after an attempt. `attemptsInSeries` counts this attempt among
 * those since the delivery was created, replayed or recovered: the first attempt plus one per
 * scheduled delay, then `dead_letter`.
 */
export function decideOutcome(input: {
  result: AttemptResult;
  attemptsInSeries: number;
  schedule: readonly number[];
  now: Date;
  random?: () => number;
}): Outcome {
  const { result } = input;
  if (result.ok) return { kind: "delivered" };
  if (result.status === 410) return { kind: "gone" };
  const base = input.schedule[input.attemptsInSeries - 1];
  if (base === undefined) return { kind: "dead_letter", reason: result.error };
  const random = input.random ?? Math.random;
  let wait = base * (1 + JITTER * (2 * random() - 1));
  if (result.retryAfterMs !== undefined) {
    wait = Math.max(wait, Math.min(result.retryAfterMs, wait + RETRY_AFTER_CAP_MS));
  }
  return { kind: "retry", at: new Date(input.now.getTime() + Math.round(wait)) };
}

/** `Retry-After` as milliseconds from `now`: delta-seconds or an HTTP date; undefined when unusable. */
export function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number.parseInt(trimmed, 10) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}

/**
 * Whether a failing endpoint is disabled now: every delivery attempt since `failingSince` (the
 * first failure after its last success) failed, for 5 days, and that first failure is at least
 * 12 h before this latest one.
 */
export function shouldAutoDisable(failingSince: Date | null, latestFailure: Date): boolean {
  if (!failingSince) return false;
  const span = latestFailure.getTime() - failingSince.getTime();
  return span >= AUTO_DISABLE_AFTER_MS && span >= AUTO_DISABLE_MIN_SPAN_MS;
}
