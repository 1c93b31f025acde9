import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@evalp/proto/common/v1/error";
import { AppError, ERROR_CATALOG, isErrorCode } from "../core/errors.js";
import { isConnectionFailure } from "../db/db.js";
import { peerOutage } from "./peer-outage.js";
import { requestLogger } from "./request-context.js";

/** Postgres SQLSTATEs that are a client's doing rather than a bug. */
const UNIQUE_VIOLATION = "23505";
const FOREIGN_KEY_VIOLATION = "23503";

type PgError = Error & { code?: string; table?: string; constraint?: string };

function isPgError(error: unknown): error is PgError {
  return error instanceof Error && typeof (error as PgError).code === "string" && "severity" in error;
}

/**
 * Turns anything a handler throws into a ConnectError carrying the contract's code and context
 * as an `ErrorDetail`. Unknown errors become `internal`: logged with their cause, never sent.
 */
export function toConnectError(error: unknown): ConnectError {
  if (error instanceof ConnectError && error.findDetails(ErrorDetailSchema).length > 0) return error;
  const app = toAppError(error);
  return new ConnectError(app.message, ERROR_CATALOG[app.code].connect, undefined, [
    { desc: ErrorDetailSchema, value: { code: app.code, context: app.context as JsonObject } },
  ]);
}

function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  if (isPgError(error) && error.code === UNIQUE_VIOLATION) {
    return new AppError("already_exists", "Already exists.", { resource: error.table ?? "resource" });
  }
  if (isPgError(error) && error.code === FOREIGN_KEY_VIOLATION) {
    return new AppError("not_found", "A referenced resource was not found.", {
      resource: error.table ?? "resource",
    });
  }
  // Postgres down or restarting (refused, sessions ended by a shutdown, "starting up") is the
  // backend's state, not a bug: 503 `unavailable` with Retry-After, which a client retries.
  if (isConnectionFailure(error)) return new AppError("unavailable", undefined, {}, { cause: error });
  // A transaction Postgres aborted because it lost a race with another (a deadlock, or a
  // serialization failure) was rolled back whole: the same request, sent again, runs again.
  if (isLostRace(error)) {
    return new AppError(
      "unavailable",
      "The request collided with another; send it again.",
      {},
      { cause: error },
    );
  }
  return new AppError("internal", undefined, {}, { cause: error });
}

/** 40001 serialization_failure and 40P01 deadlock_detected. */
const LOST_RACE_SQLSTATES = new Set(["40001", "40P01"]);

function isLostRace(error: unknown): error is PgError {
  return isPgError(error) && LOST_RACE_SQLSTATES.has(error.code ?? "");
}

/**
 * Reads the contract code and context back out of a ConnectError on the calling side. A
 * Connect error without our detail failed in transport and maps as `peerOutage` says (the peer
 * down or gone mid-call: 503; no answer in time: 504); anything else is a bug.
 */
export function fromConnectError(error: ConnectError): AppError {
  const [detail] = error.findDetails(ErrorDetailSchema);
  if (detail && isErrorCode(detail.code)) {
    return new AppError(detail.code, error.rawMessage, (detail.context ?? {}) as Record<string, unknown>);
  }
  return peerOutage(error) ?? new AppError("internal", undefined, {}, { cause: error });
}

/** Server interceptor: every RPC's failure leaves the service as a typed ConnectError; bugs are logged. */
export const errorInterceptor: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (error) {
    const connectError = toConnectError(error);
    if (connectError.code === Code.Internal) {
      requestLogger(req.contextValues).error({ err: error, rpc: req.method.name }, "rpc failed");
    } else if (isLostRace(error)) {
      // Not a bug the caller sees, but one to look at when it recurs: writers that lock in
      // different orders.
      requestLogger(req.contextValues).warn({ err: error, rpc: req.method.name }, "rpc lost a race");
    }
    throw connectError;
  }
};
