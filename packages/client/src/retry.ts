/**
 * How the client retries what is safe to send again with the same Idempotency-Key (docs/errors.md):
 * 409 `idempotency_key_in_use`, 429 `rate_limited`, 503 `unavailable`, 504 `upstream_timeout`, and
 * a request that never got an answer (a network error).
 */
export type RetryOptions = {
  /** Tries in all, the first included (default 3); 1 turns retrying off. */
  attempts?: number;
  /**
   * The longest wait before a retry (default 30 000 ms). A `Retry-After` asking for longer is not
   * waited for: the answer is returned as it is.
   */
  maxDelayMs?: number;
  /** The first wait when the answer names none, doubled at each retry (default 500 ms). */
  baseDelayMs?: number;
};

export type RetryPolicy = Required<RetryOptions>;

/**
 * The statuses whose requests are tried again: the server asked the client to come back later, or
 * did not say whether it ran the request (504), which the same key makes safe to ask again. A 409
 * is retried only when its code is `idempotency_key_in_use` (the first try is still running).
 */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503, 504]);

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { attempts: 1, maxDelayMs: 0, baseDelayMs: 0 };
  return {
    attempts: Math.max(1, Math.floor(options?.attempts ?? 3)),
    maxDelayMs: options?.maxDelayMs ?? 30_000,
    baseDelayMs: options?.baseDelayMs ?? 500,
  };
}

/**
 * How long to wait before retry number `retry` (1 for the first): what `Retry-After` says (seconds
 * or an HTTP date), else an exponential backoff; `undefined` when that is longer than the policy
 * allows, so the caller gets the answer at once rather than a hidden long wait.
 */
export function retryDelay(
  retryAfter: string | null,
  retry: number,
  policy: RetryPolicy,
  now: number = Date.now(),
): number | undefined {
  const asked = parseRetryAfter(retryAfter, now);
  const delay = asked ?? policy.baseDelayMs * 2 ** (retry - 1);
  if (asked !== undefined && asked > policy.maxDelayMs) return undefined;
  return Math.min(delay, policy.maxDelayMs);
}

/** `Retry-After` in milliseconds: delta seconds or an HTTP date; `undefined` when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  // An HTTP date names its day and month ("Wed, 25 Nov 2026 10:00:05 GMT"); a bare "-1" is no date.
  const at = /[a-z]/i.test(trimmed) ? Date.parse(trimmed) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
