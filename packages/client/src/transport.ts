import { setTimeout as sleep } from "node:timers/promises";
import { isRetried, type RetryOptions, retryDelay, retryPolicy } from "./retry.js";

/** What the client sends requests through: `fetch` or anything shaped like it. */
export type Fetch = (request: Request) => Promise<Response>;

const WRITES: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A `fetch` that gives every write an `Idempotency-Key` (a new UUID unless the caller set one) and
 * tries again what the server asked to be retried (429, 503, 409 `idempotency_key_in_use`) and
 * 504s, waiting as `Retry-After` says. Every retry sends the same request, key included, so the
 * server runs a write at most once and a retry after a lost answer gets its result (docs/idempotency.md).
 */
export function createTransport(fetchImpl: Fetch, retry?: RetryOptions | false): Fetch {
  const policy = retryPolicy(retry);
  return async (request) => {
    if (WRITES.has(request.method) && !request.headers.has("idempotency-key")) {
      request.headers.set("idempotency-key", crypto.randomUUID());
    }
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= policy.attempts;
      // A body can be read once: every try but the last sends a copy.
      const response = await fetchImpl(last ? request : request.clone());
      if (last || !isRetried(response)) return response;
      const delay = retryDelay(response.headers.get("retry-after"), attempt, policy);
      if (delay === undefined) return response;
      await response.body?.cancel();
      await sleep(delay, undefined, { signal: request.signal });
    }
  };
}
