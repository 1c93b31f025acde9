import { hash, randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { AppError, type Config, fromConnectError, type IdempotencyMetadata } from "@evalp/kit";
import canonicalize from "canonicalize";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Seal } from "../idempotency/records.js";
import { idempotencyRecords } from "../idempotency/records.js";
import type { GatewayMetrics, RateLimitName } from "../metrics.js";
import type { RedisClient } from "../redis.js";
import {
  type PrincipalCache,
  type PrincipalChange,
  pathParams,
  presentedCredential,
  type RouteAccess,
} from "./credentials.js";
import { fixedWindows, redisKeys } from "./round-trip.js";
import { addressWindows, WINDOW_MS } from "./step.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Set by the idempotency check when this request holds a key's lock (`owner` is the lock's
     * token): what the planes are told of the key (`plane`), and `final` false once a plane
     * answered about the key itself rather than the request (nothing is stored then).
     */
    idempotency?: {
      recordKey: string;
      lockKey: string;
      owner: string;
      fingerprint: string;
      plane: IdempotencyMetadata;
      final?: boolean;
    };
  }
}

/**
 * The checks that act on what the admission step found (`request.admission`, admission/step.ts),
 * registered in the order of docs/architecture.md's hooks: the rate limit (429), auth (401, 404,
 * 403; then the deprecation headers of a legacy key's answers), idempotency (replay, 409, 422,
 * after body parsing). They read what the admission's round trip found: Redis is asked again only
 * once answered (a refusal counted, an answer stored) or to lock a key whose record no longer opens.
 */
export function registerChecks(
  app: FastifyInstance,
  redis: RedisClient,
  options: {
    prefix: string;
    principals: PrincipalCache;
    /** The headers of every answer to a legacy key (`legacyKeyHeaders`). */
    legacyKeyHeaders: Record<string, string>;
    seal: Seal;
    lockMs: number;
  },
  metrics?: Pick<GatewayMetrics, "rateLimited" | "idempotencyReplayed" | "idempotencyConflict">,
): void {
  registerRateLimit(app, redis, { prefix: options.prefix, refused: metrics?.rateLimited });
  registerAuth(app, { principals: options.principals });
  registerDeprecation(app, options.legacyKeyHeaders);
  registerIdempotency(app, redis, { seal: options.seal, lockMs: options.lockMs }, metrics);
}

/**
 * The edge limiter (docs/configuration.md), as the admission step counted it (admission/step.ts):
 * 429 `rate_limited` with `Retry-After` past a limit; `RateLimit-Limit/Remaining/Reset` on every
 * response, of the credential's window once proven, else of the address's. A request whose
 * credential is refused (401, or 403 before it was proven) counts against its address's refusals,
 * once answered.
 */
function registerRateLimit(
  app: FastifyInstance,
  redis: RedisClient,
  options: {
    prefix: string;
    /** Told of each refusal, with the limit that refused. */
    refused?: (limit: RateLimitName) => void;
  },
): void {
  const windows = fixedWindows(redis, WINDOW_MS);
  const keys = redisKeys(options.prefix);

  app.addHook("onRequest", async (request) => {
    const over = request.admission?.over;
    if (!over) return;
    options.refused?.(over.name);
    const retryAfter = Math.max(1, Math.ceil(over.window.resetMs / 1000));
    throw new AppError(
      "rate_limited",
      "Too many requests; slow down.",
      { limit: over.limit, retry_after_seconds: retryAfter },
      { headers: { "Retry-After": String(retryAfter) } },
    );
  });

  app.addHook("onSend", async (request, reply) => {
    const shown = request.admission?.shown;
    if (!shown) return;
    const { limit, window } = shown;
    reply.header("RateLimit-Limit", String(limit));
    reply.header("RateLimit-Remaining", String(Math.max(0, limit - window.count)));
    reply.header("RateLimit-Reset", String(Math.max(1, Math.ceil(window.resetMs / 1000))));
  });

  // A credential that was presented and refused counts against the address that sent it;
  // Redis unreachable: nothing is counted.
  app.addHook("onResponse", async (request, reply) => {
    const kind = request.admission?.identity.kind;
    const proven = kind === "operator" || kind === "participant" || kind === "agent";
    const refused = reply.statusCode === 401 || (reply.statusCode === 403 && !proven);
    if (!refused || !presentedCredential(request)) return;
    await windows.hit(addressWindows(keys, request).refusals).catch(() => null);
  });
}

/**
 * Authentication as the admission step proved it (admission/credentials.ts), on every route that
 * declares `auth` other than `none`, before the body is even read: a caller who may not call
 * learns nothing more. The caller is set on the request (`access` for an operator, `participant`
 * or `agent`), then its refusal thrown: 401 for no credential or one that proves nothing
 * (participant and connection tokens are verified there and never reach control; on operator
 * routes they are refused as unknown credentials), 404 across organizations, 403 for scope.
 */
function registerAuth(app: FastifyInstance, deps: { principals: PrincipalCache }): void {
  app.addHook("onRequest", async (request) => {
    const identity = request.admission?.identity;
    if (!identity) return;
    if (identity.kind === "refused") throw identity.refusal;
    if (identity.kind === "participant") request.participant = identity.participant;
    if (identity.kind === "agent") request.agent = identity.agent;
    if (identity.kind === "operator") {
      request.access = identity.access;
      request.credential = identity.credential;
      if (identity.refusal) throw identity.refusal;
    }
  });
  app.addHook("onSend", async (request, reply) => {
    // Before the client hears of its change, no gateway may still use what it changed. A 4xx is
    // a change refused (nothing changed); a 5xx may have been made before it failed (a timeout
    // after control committed), so it is forgotten like a success.
    const changes = request.routeOptions.config.access?.changesPrincipals;
    if (changes && (reply.statusCode < 400 || reply.statusCode >= 500)) {
      const change = principalChange(changes, request);
      if (change) await deps.principals.forget(change);
    }
  });
}

/** What a change-making request touched, as its route declares; undefined when it names no one. */
function principalChange(
  changes: NonNullable<RouteAccess["changesPrincipals"]>,
  request: FastifyRequest,
): PrincipalChange | undefined {
  if (changes === "all") return { all: true };
  if (changes === "credential") return request.credential ? { credential: request.credential } : undefined;
  if (changes === "user") {
    const userId = request.access?.principal.userId;
    return userId ? { userId } : undefined;
  }
  const id = pathParams(request)[changes.param];
  return id ? { principalId: id } : undefined;
}

/**
 * The headers every answer to a legacy key carries (docs/http.md#deprecation): `Deprecation` as
 * RFC 9745 writes it (`@` and the Unix time it took effect), a `Link` to what to do instead
 * (`rel="deprecation"`), and `Sunset` (RFC 8594, an HTTP date) once a date is set.
 */
export function legacyKeyHeaders(
  config: Pick<Config, "LEGACY_API_KEYS_DEPRECATED_AT" | "LEGACY_API_KEYS_SUNSET_AT" | "PUBLIC_URL">,
): Record<string, string> {
  const headers: Record<string, string> = {
    deprecation: `@${Math.floor(config.LEGACY_API_KEYS_DEPRECATED_AT.getTime() / 1000)}`,
    link: `<${new URL("/docs/guides/authentication.md#legacy-keys", config.PUBLIC_URL)}>; rel="deprecation"; type="text/markdown"`,
  };
  if (config.LEGACY_API_KEYS_SUNSET_AT) headers.sunset = config.LEGACY_API_KEYS_SUNSET_AT.toUTCString();
  return headers;
}

/** Legacy keys are for migration only: every answer to one says so, and until when. */
function registerDeprecation(app: FastifyInstance, headers: Record<string, string>): void {
  app.addHook("onSend", async (request, reply) => {
    if (request.access?.principal.kind === "legacy") reply.headers(headers);
  });
}

/** Records live 24 h (docs/idempotency.md). */
const RECORD_TTL_SECONDS = 24 * 60 * 60;
/**
 * What the in-flight lock lives beyond REQUEST_TIMEOUT_MS, which bounds the request holding it
 * (its body, then its upstream calls: `callOptions`): the margin covers storing the answer. The
 * lock still expires on its own if the gateway dies holding it, so a key is never stuck.
 */
const LOCK_MARGIN_MS = 5_000;

/** How long a key's in-flight lock lives when requests take at most `requestTimeoutMs`. */
export function lockTtlMs(requestTimeoutMs: number): number {
  return requestTimeoutMs + LOCK_MARGIN_MS;
}
/**
 * The largest answer a record keeps (sealed, its JSON): a larger one is still answered, but not
 * stored: its key is released and a retry runs again (logged). No answer of the API's
 * operations comes near it but a template's full definitions.
 */
export const MAX_RECORD_BYTES = 256 * 1024;

type StoredResponse = { fingerprint: string; status: number; body: string; headers: Record<string, string> };

/** Response headers that belong to the outcome and come back on a replay. */
const REPLAYED_HEADERS = ["location", "retry-after"];

/** SHA-256 of method, path and the canonical JSON (RFC 8785) of the body (docs/idempotency.md). */
export function requestFingerprint(method: string, path: string, body: unknown): string {
  const canonical = body === undefined ? "" : (canonicalize(body) ?? "");
  return hash("sha256", `${method}\n${path}\n${canonical}`, "hex");
}

/** A replayed body says so where its shape has `idempotent_replay` (docs/idempotency.md). */
function markReplayed(body: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && "idempotent_replay" in parsed) {
      return JSON.stringify({ ...parsed, idempotent_replay: true });
    }
  } catch {
    // Not JSON: replay verbatim.
  }
  return body;
}

/** 409 for a key whose first request is still running, counted in `metrics`. */
function inUse(metrics?: Pick<GatewayMetrics, "idempotencyConflict">): AppError {
  metrics?.idempotencyConflict("in_use");
  return new AppError(
    "idempotency_key_in_use",
    "A request with this Idempotency-Key is still running.",
    {},
    { headers: { "Retry-After": "1" } },
  );
}

function unavailable(cause: unknown): AppError {
  return new AppError("unavailable", undefined, {}, { cause });
}

/** Codes a plane answers about the key itself, not the request: never a key's final answer. */
const KEY_REFUSALS = new Set(["idempotency_key_in_use", "idempotency_key_reused"]);

/**
 * Idempotency-Key (docs/idempotency.md): a Redis lock (`SET NX PX`, owned by a token of its own)
 * admits one execution per key, taken in the same script that looks for a stored record (one
 * round trip), claimed by the admission step with the rate limit's windows (admission/step.ts) and
 * only read here; the final response
 * (< 500) is stored with the request fingerprint, sealed (`idempotency/records.ts`) and at most
 * MAX_RECORD_BYTES, and replayed verbatim. Answered after authentication (keys are scoped to the
 * caller) and body parsing, and before validation, so that a stored 422 replays too.
 *
 * The lock only spares the planes concurrent duplicates: what makes a write run once is the
 * planes' own record of the key, written in the write's transaction (kit's
 * idempotency-interceptor.ts). Every upstream call of a request holding a key carries the key's
 * identity (`callOptions`), so a retry whose first answer was lost (a 504 while the plane went on
 * to commit, a 5xx on the way back) is answered by the plane with the committed outcome, or 409
 * while that run is still going; a run that committed nothing runs again. Replays and refused
 * keys are counted in `metrics`.
 */
function registerIdempotency(
  app: FastifyInstance,
  redis: RedisClient,
  options: { seal: Seal; lockMs: number },
  metrics?: Pick<GatewayMetrics, "idempotencyReplayed" | "idempotencyConflict">,
): void {
  const { seal, lockMs } = options;
  const records = idempotencyRecords(redis);
  // Requests whose claim this check took up: any other claimed lock is released unused.
  const taken = new WeakSet<FastifyRequest>();
  app.addHook("preValidation", async (request, reply) => {
    const claim = request.admission?.claim;
    if (!claim) return undefined;
    taken.add(request);
    const { id, recordKey, lockKey, outcome } = claim;
    let owner = claim.owner;
    const fingerprint = requestFingerprint(request.method, request.url.split("?")[0] ?? "", request.body);

    if (outcome.kind === "unavailable") throw unavailable(outcome.cause);
    if (outcome.kind === "busy") throw inUse(metrics);
    if (outcome.kind === "stored") {
      const opened = seal.open(outcome.sealed);
      if (opened) {
        const record = JSON.parse(opened) as StoredResponse;
        if (record.fingerprint !== fingerprint) {
          metrics?.idempotencyConflict("reused");
          throw new AppError(
            "idempotency_key_reused",
            "This Idempotency-Key was used with a different request.",
          );
        }
        metrics?.idempotencyReplayed();
        await sendReplay(reply, record);
        return reply;
      }
      // A record that does not open (sealed under a rotated secret) counts as absent: the request
      // runs again under the lock, and its answer replaces the record.
      owner = randomUUID();
      const locked = await redis.set(lockKey, owner, "PX", lockMs, "NX").catch((error: unknown) => {
        throw unavailable(error);
      });
      if (locked !== "OK") throw inUse(metrics);
    }
    request.idempotency = {
      recordKey,
      lockKey,
      owner,
      fingerprint,
      plane: { id, fingerprint, sealKey: seal.planeKey(id) },
    };
    return undefined;
  });

  /** Releases the lock of a key claimed early for a request that ended before it was answered. */
  const releaseUnused = async (request: FastifyRequest) => {
    const unused = request.admission?.claim;
    if (taken.has(request) || unused?.outcome.kind !== "claimed") return;
    taken.add(request);
    await records
      .finish(unused.recordKey, unused.lockKey, unused.owner, null, RECORD_TTL_SECONDS)
      .catch((error: unknown) => request.log.error({ err: error }, "idempotency lock release failed"));
  };
  app.addHook("onRequestAbort", releaseUnused);

  // A plane's word about the key (another run under it still going, or it committed another
  // request) is this request's answer, but not the key's: nothing is stored, a retry asks again.
  app.addHook("onError", async (request, _reply, error) => {
    const code = error instanceof AppError ? error.code : codeOf(error);
    if (code && KEY_REFUSALS.has(code) && request.idempotency) request.idempotency.final = false;
  });

  app.addHook("onSend", async (request, reply, payload) => {
    await releaseUnused(request);
    const held = request.idempotency;
    if (!held) return payload;
    request.idempotency = undefined;
    const status = reply.statusCode;
    let sealed: string | null = null;
    if (status < 500 && held.final !== false && typeof payload === "string") {
      const headers: Record<string, string> = {};
      for (const name of REPLAYED_HEADERS) {
        const value = reply.getHeader(name);
        if (value !== undefined) headers[name] = String(value);
      }
      const record: StoredResponse = { fingerprint: held.fingerprint, status, body: payload, headers };
      sealed = seal.seal(JSON.stringify(record));
      if (sealed.length > MAX_RECORD_BYTES) {
        request.log.warn(
          { record_bytes: sealed.length, limit_bytes: MAX_RECORD_BYTES },
          "idempotency record too large to keep: answered, not stored (a retry runs again)",
        );
        sealed = null;
      }
    }
    // A failure to store is logged, not sent: the response itself is already final. The lock
    // then expires on its own, and a retry is answered by the planes' record of the key. A run
    // whose lock expired meanwhile stores nothing and releases nothing: the lock and the record
    // are the run's that holds it now.
    await records
      .finish(held.recordKey, held.lockKey, held.owner, sealed, RECORD_TTL_SECONDS)
      .then((owned) => {
        if (!owned) request.log.warn("idempotency lock lost before the answer: nothing stored");
      })
      .catch((error: unknown) => request.log.error({ err: error }, "idempotency store failed"));
    return payload;
  });
}

/** The contract code a plane's error carries, for errors not yet rendered as AppError. */
function codeOf(error: unknown): string | undefined {
  return error instanceof ConnectError ? fromConnectError(error).code : undefined;
}

async function sendReplay(reply: FastifyReply, record: StoredResponse): Promise<void> {
  for (const [name, value] of Object.entries(record.headers)) reply.header(name, value);
  await reply
    .code(record.status)
    .header("Idempotent-Replayed", "true")
    .type("application/json")
    .send(markReplayed(record.body));
}
