import { hash, randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { AppError, fromConnectError } from "@evalp/kit";
import canonicalize from "canonicalize";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { type Claim, idempotencyRecords } from "../idempotency/records.js";
import type { Seal } from "../idempotency/seal.js";
import type { GatewayMetrics } from "../metrics.js";

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
const HEADER = "idempotency-key";
const MAX_KEY_LENGTH = 255;
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

/** The Redis identity of one key in its scope (docs/idempotency.md: caller, method, route). */
export function idempotencyId(scope: string, method: string, route: string, key: string): string {
  return hash("sha256", `${scope}\n${method}\n${route}\n${key}`, "hex");
}

/**
 * The scope of an operator's keys: the caller (an API key, or a signed-in user: the principal's
 * kind and id) in the organization it acts in. Another credential of the same organization that
 * sends the same key and body makes another request, and never sees this caller's answer (which
 * can hold a secret that only this caller may read).
 */
export function operatorScope(kind: string, principalId: string, organizationId: string | null): string {
  return `${kind}:${principalId}@${organizationId ?? ""}`;
}

/**
 * Whom a key belongs to: the participant session, the operator (`operatorScope`), an anonymous
 * caller by its address, so that one client's keys never meet another's.
 */
function keyScope(request: FastifyRequest): string {
  const access = request.access;
  if (request.participant) return `participant:${request.participant.sessionId}`;
  if (access)
    return operatorScope(access.principal.kind, access.principal.principalId, access.organizationId);
  return `anonymous:${request.ip}`;
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

function unavailable(cause: unknown): AppError {
  return new AppError("unavailable", undefined, {}, { cause });
}

/** A claim's outcome, or Redis unreachable when it was made. */
export type ClaimOutcome = Claim | { kind: "unavailable"; cause: unknown };

/** Where the key of a request lives in Redis, if it carries one that its route honours. */
function claimTarget(
  request: FastifyRequest,
  prefix: string,
): { id: string; recordKey: string; lockKey: string } | undefined {
  const mode = request.routeOptions.config.access?.idempotency ?? "none";
  const key = request.headers[HEADER];
  if (mode === "none" || typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH)
    return undefined;
  const id = idempotencyId(keyScope(request), request.method, request.routeOptions.url ?? request.url, key);
  return { id, recordKey: `${prefix}idem:rec:${id}`, lockKey: `${prefix}idem:lock:${id}` };
}

/**
 * The auth plugin's count of a proven credential, with the request's Idempotency-Key claimed in
 * the same round trip by `count` (the rate limit's) once the request is authorized: whom the key
 * belongs to is known then, and a request of an idempotent route claims its key anyway. The
 * outcome waits on the request (`idempotencyClaim`) until the body is parsed, so that every
 * error the request would meet before the key is looked at still comes first; a lock claimed
 * for a request that ends before (a body refused) is released unused. The lock's owner is a
 * token of this claim's own (not the request id, which a client may choose).
 */
export function countClaiming(
  prefix: string,
  lockMs: number,
  count: (
    request: FastifyRequest,
    claim?: { recordKey: string; lockKey: string; owner: string; ttlMs: number },
  ) => Promise<ClaimOutcome | undefined>,
): (request: FastifyRequest, authorized: boolean) => Promise<void> {
  return async (request, authorized) => {
    const target = authorized ? claimTarget(request, prefix) : undefined;
    const owner = randomUUID();
    const outcome = await count(request, target && { ...target, owner, ttlMs: lockMs });
    if (target) request.idempotencyClaim = { ...target, owner, outcome };
  };
}

/** Codes a plane answers about the key itself, not the request: never a key's final answer. */
const KEY_REFUSALS = new Set(["idempotency_key_in_use", "idempotency_key_reused"]);

/**
 * Idempotency-Key (docs/idempotency.md): a Redis lock (`SET NX PX`, owned by a token of its own)
 * admits one execution per key, taken in the same script that looks for a stored record (one
 * round trip), usually together with the rate limit's count (`countClaiming`); the final response
 * (< 500) is stored with the request fingerprint, sealed (`idempotency/seal.ts`) and at most
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
export function registerIdempotency(
  app: FastifyInstance,
  redis: Redis,
  options: { prefix: string; seal: Seal; lockMs: number },
  metrics?: Pick<GatewayMetrics, "idempotencyReplayed" | "idempotencyConflict">,
): void {
  const { prefix, seal, lockMs } = options;
  const records = idempotencyRecords(redis);
  app.addHook("preValidation", async (request, reply) => {
    const early = request.idempotencyClaim;
    request.idempotencyClaim = undefined;
    const target = early ?? claimTarget(request, prefix);
    if (!target) return undefined;
    const { id, recordKey, lockKey } = target;
    let owner = early?.owner ?? randomUUID();
    const fingerprint = requestFingerprint(request.method, request.url.split("?")[0] ?? "", request.body);

    const inUse = () => {
      metrics?.idempotencyConflict("in_use");
      return new AppError(
        "idempotency_key_in_use",
        "A request with this Idempotency-Key is still running.",
        {},
        { headers: { "Retry-After": "1" } },
      );
    };

    // The record, or else the lock, in one round trip (idempotency/records.ts), unless the rate
    // limit's count already claimed it.
    const outcome =
      early?.outcome ??
      (await records.claim(recordKey, lockKey, owner, lockMs).catch((error: unknown) => {
        throw unavailable(error);
      }));
    if (outcome.kind === "unavailable") throw unavailable(outcome.cause);
    if (outcome.kind === "busy") throw inUse();
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
      if (locked !== "OK") throw inUse();
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
    const unused = request.idempotencyClaim;
    request.idempotencyClaim = undefined;
    if (unused?.outcome?.kind !== "claimed") return;
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
