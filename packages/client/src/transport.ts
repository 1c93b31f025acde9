import { RETRIED_STATUSES, type RetryOptions, type RetryPolicy, retryDelay, retryPolicy } from "./retry.js";

/** What the client sends requests through: `fetch` or anything shaped like it. */
export type Fetch = (request: Request) => Promise<Response>;

const WRITES: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"]);

/**
 * A `fetch` that gives every write an `Idempotency-Key` (a new UUID unless the caller set one) and
 * tries again what is safe to try again (`RETRIED_STATUSES`, a 409 `idempotency_key_in_use`, and a
 * request that got no answer at all), waiting as `Retry-After` says or backing off. Every retry
 * sends the same request, key included, so the server runs a write at most once and answers a
 * retry of a write it finished with that write's answer (docs/idempotency.md).
 */
export function createTransport(fetchImpl: Fetch, retry?: RetryOptions | false): Fetch {
  const policy = retryPolicy(retry);
  return async (request) => {
    if (WRITES.has(request.method) && !request.headers.has("idempotency-key")) {
      request.headers.set("idempotency-key", crypto.randomUUID());
    }
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= policy.attempts;
      let response: Response;
      try {
        // A body can be read once: every try but the last sends a copy.
        response = await fetchImpl(last ? request : request.clone());
      } catch (error) {
        if (last || !unanswered(error, request)) throw error;
        await sleep(backoff(attempt, policy), request.signal);
        continue;
      }
      if (last || !(await asksForRetry(response))) return response;
      const delay = retryDelay(response.headers.get("retry-after"), attempt, policy);
      if (delay === undefined) return response;
      await response.body?.cancel();
      await sleep(delay, request.signal);
    }
  };
}

/** Whether an answer says to try again later: a retried status, or the key still in use. */
async function asksForRetry(response: Response): Promise<boolean> {
  if (RETRIED_STATUSES.has(response.status)) return true;
  if (response.status !== 409) return false;
  const body: unknown = await response
    .clone()
    .json()
    .catch(() => undefined);
  return (body as { detail?: { code?: unknown } } | undefined)?.detail?.code === "idempotency_key_in_use";
}

/**
 * A request that got no answer (connection refused or reset, DNS): `fetch` rejects with a
 * TypeError. A caller's own abort is not retried.
 */
function unanswered(error: unknown, request: Request): boolean {
  return error instanceof TypeError && !request.signal.aborted;
}

function backoff(attempt: number, policy: RetryPolicy): number {
  return Math.min(policy.baseDelayMs * 2 ** (attempt - 1), policy.maxDelayMs);
}

/** A wait a caller's signal cuts short; timers only, so it runs wherever `fetch` does. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
