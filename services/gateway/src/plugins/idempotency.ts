import { hash, randomUUID } from "node:crypto";
import { ConnectError } from "@connectrpc/connect";
import { AppError, fromConnectError } from "@evalp/kit";
import canonicalize from "canonicalize";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { idempotencyRecords } from "../idempotency/records.js";
import type { Seal } from "../idempotency/seal.js";
import type { GatewayMetrics } from "../metrics.js";
import type { RedisClient } from "../redis.js";

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
  redis: RedisClient,
  options: { seal: Seal; lockMs: number },
  metrics?: Pick<GatewayMetrics, "idempotencyReplayed" | "idempotencyConflict">,
): void {
  const { seal, lockMs } = options;
  const records = idempotencyRecords(redis);
  // Requests whose claim this plugin took up: any other claimed lock is released unused.
  const taken = new WeakSet<FastifyRequest>();
  app.addHook("preValidation", async (request, reply) => {
    const claim = request.admission?.claim;
    if (!claim) return undefined;
    taken.add(request);
    const { id, recordKey, lockKey, outcome } = claim;
    let owner = claim.owner;
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
