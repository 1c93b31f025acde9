import { transportFailure } from "@evalp/connect-h2";
import { AppError } from "../core/errors.js";

// How a call failed in transport, and whether it provably never reached its peer, are the hop's.
export { neverReached, transportFailure } from "@evalp/connect-h2";

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
