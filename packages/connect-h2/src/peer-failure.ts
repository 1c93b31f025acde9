import { Code, ConnectError } from "@connectrpc/connect";
import { codeOf } from "./h2-errors.js";

/**
 * How a call to another process failed in transport rather than in the peer's handler (whose
 * errors carry details): the peer refused the connection or stream (unavailable), or died
 * mid-call, which connect-node reports as aborted (the socket reset) or canceled (the socket
 * ended, so HTTP/2 closes the open streams with CANCEL) — all "unavailable" — or it did not answer
 * in time ("deadline"). Nothing here cancels its own calls, so canceled is always the peer.
 * Undefined for anything else, the peer's own answers included.
 */
export function transportFailure(error: unknown): "unavailable" | "deadline" | undefined {
  if (!(error instanceof ConnectError) || error.details.length > 0) return undefined;
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

/**
 * The codes of failures that prove the peer never took the request: the connection refused
 * (`ECONNREFUSED`), the connection sent away or destroyed before the stream was opened on it
 * (`ERR_HTTP2_GOAWAY_SESSION`, `ERR_HTTP2_INVALID_SESSION`, and `ERR_HTTP2_STREAM_CANCEL`, which
 * Node gives only a stream still pending, its headers never sent), the stream refused unprocessed
 * (`NGHTTP2_REFUSED_STREAM`, RFC 9113 §8.7). A reset connection (`ECONNRESET`), a canceled or reset
 * stream, a PING left unanswered are not among them: the peer may have run the call.
 */
const NEVER_REACHED = new Set([
  "ECONNREFUSED",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_INVALID_SESSION",
  "ERR_HTTP2_STREAM_CANCEL",
  "NGHTTP2_REFUSED_STREAM",
]);

/**
 * True when a failed call provably never reached the peer's handler, read from the `code` of the
 * failure and its causes, so that it may be sent to another replica whatever it does.
 */
export function neverReached(error: unknown): boolean {
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; depth++) {
    const code = codeOf(cause);
    if (code !== undefined && NEVER_REACHED.has(code)) return true;
    cause = cause.cause;
  }
  return false;
}
