import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "@evalp/proto/common/v1/error";
import { AppError } from "./errors.js";

/**
 * A call to another process that failed in transport rather than in the peer's handler (no
 * `ErrorDetail`): the peer refused the connection or stream (unavailable), or died mid-call,
 * which connect-node reports as aborted (the socket reset) or canceled (the socket ended, so
 * HTTP/2 closes the open streams with CANCEL), or it did not answer in time (deadline). That is
 * the contract's 503 `unavailable` or 504 `upstream_timeout`, never a bug's 500, and a peer that
 * vanished is no timeout. Nothing here cancels its own calls, so canceled is always the peer.
 */
export function peerOutage(error: unknown): AppError | undefined {
  if (!(error instanceof ConnectError) || error.findDetails(ErrorDetailSchema).length > 0) return undefined;
  switch (error.code) {
    case Code.Unavailable:
    case Code.Aborted:
    case Code.Canceled:
      return new AppError("unavailable", undefined, {}, { cause: error });
    case Code.DeadlineExceeded:
      return new AppError("upstream_timeout", undefined, {}, { cause: error });
    default:
      return undefined;
  }
}
