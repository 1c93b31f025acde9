import { type DescMethod, fromBinary, toBinary } from "@bufbuild/protobuf";
import type { Interceptor, StreamResponse, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { AppError, isErrorCode } from "../core/errors.js";
import type { Pool } from "../db/db.js";
import { fromConnectError, toConnectError } from "../rpc/connect-errors.js";
import { requestLogger } from "../rpc/request-context.js";
import {
  commitHeld,
  findKey,
  IDEMPOTENCY_FINGERPRINT_HEADER,
  IDEMPOTENCY_ID_HEADER,
  IDEMPOTENCY_SEAL_HEADER,
  KeyAlreadyCommitted,
  type KeyInFlight,
  keyInUse,
  openOutcome,
  runUnderKey,
  sealOutcome,
  storeKeyOutcome,
} from "./idempotency-keys.js";

/** What a key's row keeps of its run: the answer's message (binary, base64) or its error. */
type Outcome =
  | { message: string }
  | { error: { code: string; message: string; context: Record<string, unknown> } };

/**
 * Server interceptor of every plane (docs/idempotency.md): a unary call the gateway made under an
 * Idempotency-Key is executed at most once per key and RPC. Before the handler, the key's row is
 * looked up: a committed run's stored outcome is answered again (its message, or its error), a
 * committed run whose outcome is not stored yet is 409 `idempotency_key_in_use`, a different
 * request under the key 422 `idempotency_key_reused`. Otherwise the handler runs under the key,
 * and its first transaction records it (`withTransaction`); that transaction commits once the
 * handler answers, with the outcome (sealed with the key the gateway sent) stored in it, so a
 * process that dies at any point leaves either the write and its answer or neither. A run that
 * committed nothing leaves no row: a retry runs again. Calls without the headers (other planes' calls) pass untouched; a read made
 * for a keyed request costs one look-up and records nothing (it commits no transaction of its
 * own, or if it does, its answer is given again on a retry, which is what the retry asks for).
 * A row is per RPC: a route calls each write RPC at most once per request.
 *
 * `recordsFirst` names RPCs whose handler does nothing a retry could notice before its first
 * transaction, which records the key: they skip the look-up (a round trip and a connection), and
 * a committed run is found by that transaction instead (`KeyAlreadyCommitted`), answered as the
 * look-up would have answered it: its outcome, 409 while it is not stored, 422 for another request.
 */
export function idempotencyInterceptor(
  pool: Pool,
  options: { recordsFirst?: DescMethod[] } = {},
): Interceptor {
  const recordsFirst = new Set((options.recordsFirst ?? []).map((method) => rpcName(method.parent, method)));
  return (next) => async (req) => {
    const id = req.header.get(IDEMPOTENCY_ID_HEADER);
    const sealKey = Buffer.from(req.header.get(IDEMPOTENCY_SEAL_HEADER) ?? "", "base64url");
    if (req.stream || !id || sealKey.length !== 32) return next(req);
    const rpc = rpcName(req.service, req.method);
    const key: KeyInFlight = {
      // One row per RPC: a route that makes two writes under one key records each.
      rowId: `${id}:${rpc}`,
      fingerprint: req.header.get(IDEMPOTENCY_FINGERPRINT_HEADER) ?? "",
      state: "open",
      // The answer a handler commits with its write (kit's commitWith), sealed as settle seals it.
      sealAnswer: (answer) => {
        const encoded = encodeAnswer(req, answer as UnaryResponse["message"]);
        return {
          encoded,
          sealed: sealOutcome(sealKey, JSON.stringify({ message: encoded } satisfies Outcome)),
        };
      },
    };
    if (!recordsFirst.has(rpc)) {
      const committed = await committedAnswer(pool, key, sealKey, req);
      if (committed) return committed;
    }
    let response: UnaryResponse | StreamResponse;
    try {
      response = await runUnderKey(key, () => next(req));
    } catch (error) {
      if (error instanceof KeyAlreadyCommitted) {
        close(key);
        // Another run committed between the look-up and this run's transaction.
        const answer = await committedAnswer(pool, key, sealKey, req);
        if (answer) return answer;
        throw keyInUse();
      }
      // The write committed (or waits to), then the handler failed: that is the run's outcome,
      // not a reason to run it again.
      const failed = fromConnectError(toConnectError(error));
      await settle(pool, key, sealKey, req, {
        error: { code: failed.code, message: failed.message, context: failed.context },
      });
      throw error;
    }
    await settle(
      pool,
      key,
      sealKey,
      req,
      response.stream ? undefined : { message: encodeAnswer(req, response.message) },
    );
    return response;
  };
}

/** An answer's message as an outcome keeps it: its binary form, in base64. */
function encodeAnswer(req: UnaryRequest, message: UnaryResponse["message"]): string {
  return Buffer.from(toBinary(req.method.output, message)).toString("base64");
}

/** An RPC's full name: its service's and its own. */
function rpcName(service: { typeName: string }, method: { name: string }): string {
  return `${service.typeName}/${method.name}`;
}

/**
 * Ends the run under `key` with its outcome: committed in the write's own transaction where that
 * transaction still waits (the usual case), else stored after it. A failed COMMIT throws: the
 * write did not happen, and the caller is told so rather than given the answer.
 */
async function settle(
  pool: Pool,
  key: KeyInFlight,
  sealKey: Buffer,
  req: UnaryRequest,
  outcome: Outcome | undefined,
): Promise<void> {
  // Committed with the write already (kit's commitWith): the run is over.
  if (outcome && "message" in outcome && key.committedAnswer === outcome.message) {
    close(key);
    return;
  }
  const sealed = outcome && sealOutcome(sealKey, JSON.stringify(outcome));
  let storedWithWrite: boolean;
  try {
    storedWithWrite = await commitHeld(key, sealed);
  } catch (error) {
    close(key);
    throw error;
  }
  if (close(key) && sealed && !storedWithWrite) await store(pool, key, req, sealed);
}

/** Ends the run under `key` (work it left running records nothing); true if it recorded the key. */
function close(key: KeyInFlight): boolean {
  const recorded = key.state === "recorded";
  key.state = "closed";
  return recorded;
}

/**
 * The outcome of a committed run under the key, as this call's answer (a thrown error for an
 * error); undefined when no run committed. 409 while the committed run's outcome is not stored
 * yet (or was sealed under a rotated secret and cannot be read again).
 */
async function committedAnswer(
  pool: Pool,
  key: KeyInFlight,
  sealKey: Buffer,
  req: UnaryRequest,
): Promise<UnaryResponse | undefined> {
  const row = await findKey(pool, key.rowId);
  if (!row) return undefined;
  if (row.fingerprint !== key.fingerprint) {
    throw new AppError("idempotency_key_reused", "This Idempotency-Key was used with a different request.");
  }
  const plain = row.outcome ? openOutcome(sealKey, row.outcome) : null;
  if (plain === null) throw keyInUse();
  const outcome = JSON.parse(plain) as Outcome;
  if ("error" in outcome) {
    const { code, message, context } = outcome.error;
    throw isErrorCode(code) ? new AppError(code, message, context) : new AppError("internal");
  }
  // connect answers with the headers the response carries, replacing those it set itself: the
  // content type is the request's (the gateway's calls are Connect unary calls).
  const header = new Headers();
  const contentType = req.header.get("content-type");
  if (contentType) header.set("content-type", contentType);
  return {
    stream: false,
    service: req.service,
    method: req.method,
    header,
    trailer: new Headers(),
    message: fromBinary(req.method.output, Buffer.from(outcome.message, "base64")),
  };
}

/** Waits between further tries to store an outcome the database refused (it restarting, say). */
const STORE_RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000, 16_000];

/**
 * Stores the outcome of a run whose write committed without it (it had more than one
 * transaction, or did slow work after its write: `holdCommit`). A failure is not thrown: the answer itself stands. The store
 * is tried again in the background for half a minute (a database restarting in between loses no
 * outcome), meanwhile a retry under the key is told 409; past that (or if the process dies before)
 * the row keeps no outcome and a retry is told 409 until it expires, never running the write again.
 */
async function store(pool: Pool, key: KeyInFlight, req: UnaryRequest, sealed: Buffer): Promise<void> {
  const logger = requestLogger(req.contextValues);
  const attempt = (tried: number): Promise<void> =>
    storeKeyOutcome(pool, key.rowId, sealed).catch((error: unknown) => {
      const delay = STORE_RETRY_DELAYS_MS[tried];
      if (delay === undefined) {
        logger.error(
          { err: error, rpc: req.method.name },
          "idempotency outcome not stored: a retry under the key is answered 409 until it expires",
        );
        return;
      }
      if (tried === 0)
        logger.warn({ err: error, rpc: req.method.name }, "idempotency outcome not stored yet");
      setTimeout(() => void attempt(tried + 1), delay).unref();
    });
  await attempt(0);
}
