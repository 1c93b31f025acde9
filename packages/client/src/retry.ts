/**
 * How the client retries answers that ask to be retried (429 `rate_limited`, 503 `unavailable`,
 * 409 `idempotency_key_in_use`) and 504 `upstream_timeout` (docs/idempotency.md: retried with the
 * same key, a write whose answer was lost is answered with its result, never made twice).
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

/** The statuses whose requests are tried again: the server asked the client to come back later. */
export const RETRIED_STATUSES: ReadonlySet<number> = new Set([429, 503, 504]);

/**
 * Whether an answer is tried again: a retried status, or a 409 that says when to come back (only
 * `idempotency_key_in_use` does: the request with this key is still being carried out).
 */
export function isRetried(response: Pick<Response, "status" | "headers">): boolean {
  return (
    RETRIED_STATUSES.has(response.status) || (response.status === 409 && response.headers.has("retry-after"))
  );
}

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
