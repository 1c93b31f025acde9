import { Agent, request } from "undici";
import { type AttemptResult, parseRetryAfter } from "./retry.js";
import { deliveryHeaders } from "./sign.js";
import { checkTarget, guardedLookup, type Resolver, TargetRefused } from "./ssrf.js";

/** One attempt to post an event to an endpoint. */
export type SendInput = {
  url: string;
  body: string;
  eventId: string;
  /** The secrets that sign it: the current one, and the previous one during a rotation. */
  secrets: readonly string[];
  /** Aborts the attempt (shutdown); the result is then `aborted`. */
  signal?: AbortSignal;
};

export type Sender = {
  send(input: SendInput): Promise<AttemptResult & { aborted?: boolean }>;
  close(): Promise<void>;
};

/** A response body is not needed; at most this much is read so that the connection can be reused. */
const DRAIN_LIMIT_BYTES = 64 * 1024;

/**
 * Posts signed events with undici (docs/webhooks.md): a 2xx within the timeout is success, redirects
 * are not followed, the target is checked before every attempt and, unless private targets are
 * allowed, every connection refuses private addresses at connect time. Connections are kept
 * alive and at most `perEndpoint` are open to one origin.
 */
export function createSender(options: {
  timeoutMs: number;
  allowPrivate: boolean;
  perEndpoint: number;
  resolver?: Resolver;
}): Sender {
  const agent = new Agent({
    // HTTP/1.1, one request per connection: undici 8 negotiates HTTP/2 with any origin that
    // offers it, where `connections` would no longer bound the requests in flight to it.
    allowH2: false,
    connections: options.perEndpoint,
    keepAliveTimeout: 10_000,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    connect: {
      timeout: options.timeoutMs,
      ...(options.allowPrivate ? {} : { lookup: guardedLookup }),
    },
  });

  // One listener per caller's signal (the dispatcher's shutdown) for all the attempts it covers,
  // rather than a composite signal and a timeout signal per attempt.
  const following = new WeakMap<AbortSignal, Set<AbortController>>();
  function follow(signal: AbortSignal, controller: AbortController): () => void {
    let controllers = following.get(signal);
    if (!controllers) {
      const set = new Set<AbortController>();
      controllers = set;
      following.set(signal, set);
      signal.addEventListener("abort", () => {
        for (const each of set) each.abort(signal.reason);
      });
    }
    controllers.add(controller);
    return () => controllers.delete(controller);
  }

  return {
    async send(input) {
      const started = performance.now();
      const durationMs = () => Math.round(performance.now() - started);
      const controller = new AbortController();
      const { signal } = controller;
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new DOMException("The operation timed out.", "TimeoutError"));
      }, options.timeoutMs);
      const unfollow = input.signal ? follow(input.signal, controller) : null;
      if (input.signal?.aborted) controller.abort(input.signal.reason);
      try {
        const check = checkTarget(input.url, options.allowPrivate, options.resolver);
        // Only a lookup can hang; a target allowed by its form alone needs no guard.
        await (options.allowPrivate ? check : abortable(check, signal));
        const at = new Date();
        const response = await request(input.url, {
          method: "POST",
          headers: deliveryHeaders(input.secrets, input.eventId, at, input.body),
          body: input.body,
          dispatcher: agent,
          signal,
        });
        const status = response.statusCode;
        void response.body.dump({ limit: DRAIN_LIMIT_BYTES }).catch(() => {});
        if (status >= 200 && status < 300) return { ok: true, status, durationMs: durationMs() };
        const retryAfter =
          status === 429 || status === 503 ? header(response.headers["retry-after"]) : undefined;
        return {
          ok: false,
          status,
          error: `HTTP ${status}`,
          retryAfterMs: parseRetryAfter(retryAfter, new Date()),
          durationMs: durationMs(),
        };
      } catch (error) {
        const aborted = input.signal?.aborted === true && !timedOut;
        return {
          ok: false,
          error: describe(error, timedOut, options.timeoutMs),
          durationMs: durationMs(),
          aborted,
        };
      } finally {
        clearTimeout(timer);
        unfollow?.();
      }
    },
    close: () => agent.close(),
  };
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

const CODES: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  UND_ERR_SOCKET: "connection reset",
  ENOTFOUND: "dns lookup failed",
  EAI_AGAIN: "dns lookup failed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "host unreachable",
  UND_ERR_CONNECT_TIMEOUT: "timeout",
  UND_ERR_HEADERS_TIMEOUT: "timeout",
  UND_ERR_BODY_TIMEOUT: "timeout",
  ETIMEDOUT: "timeout",
};

/** `last_error` of an attempt that got no response: `connection refused`, `timeout after 10000 ms`… */
export function describe(error: unknown, timedOut: boolean, timeoutMs: number): string {
  if (error instanceof TargetRefused) return error.message;
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof TargetRefused) return cause.message;
  const code = errorCode(error) ?? errorCode(cause);
  const known = code ? CODES[code] : undefined;
  if (timedOut || known === "timeout") return `timeout after ${timeoutMs} ms`;
  if (known) return known;
  if (code && /CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return `tls error (${code})`;
  if ((error as { name?: string } | null)?.name === "AbortError") return "aborted";
  return code ? `request failed (${code})` : "request failed";
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}
