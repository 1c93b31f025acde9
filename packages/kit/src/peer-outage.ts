import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@evalp/proto/common/v1/error";
import { AppError } from "./core/errors.js";

/**
 * How a call to another process failed in transport rather than in the peer's handler (no
 * `ErrorDetail`): the peer refused the connection or stream (unavailable), or died mid-call,
 * which connect-node reports as aborted (the socket reset) or canceled (the socket ended, so
 * HTTP/2 closes the open streams with CANCEL) — all "unavailable" — or it did not answer in time
 * ("deadline"). Nothing here cancels its own calls, so canceled is always the peer. Undefined
 * for anything else, the peer's own answers included.
 */
export function transportFailure(error: unknown): "unavailable" | "deadline" | undefined {
  if (!(error instanceof ConnectError) || error.findDetails(ErrorDetailSchema).length > 0) return undefined;
  switch (error.code) {
    case Code.Unavailable:
    case Code.Aborted:
    case Code.Canceled:
      return "unavailable";
    case Code.DeadlineExceeded:
      return "deadline";
    default:
      return undefined;
  }
}

/** Node's errors that say the peer never took the request: the connection refused, the stream refused or sent away. */
const NEVER_REACHED = new Set(["ECONNREFUSED", "ERR_HTTP2_GOAWAY_SESSION"]);

/**
 * True when a failed call provably never reached the peer's handler (the connection was refused,
 * or HTTP/2 refused the stream or sent it away unprocessed), so that it may be sent to another
 * replica whatever it does.
 */
export function neverReached(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && NEVER_REACHED.has(code)) return true;
    if (cause.message.includes("NGHTTP2_REFUSED_STREAM")) return true;
    cause = cause.cause;
  }
  return false;
}

/**
 * A transport failure as the contract answers it: 503 `unavailable` when the peer is down,
 * restarting or gone mid-call, 504 `upstream_timeout` when it did not answer in time; never a
 * bug's 500, and a peer that vanished is no timeout. Undefined for anything else.
 */
export function peerOutage(error: unknown): AppError | undefined {
  switch (transportFailure(error)) {
    case "unavailable":
      return new AppError("unavailable", undefined, {}, { cause: error });
    case "deadline":
      return new AppError("upstream_timeout", undefined, {}, { cause: error });
    default:
      return undefined;
  }
}
