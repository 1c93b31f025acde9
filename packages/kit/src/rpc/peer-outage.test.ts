import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AppError } from "../core/errors.js";
import { toConnectError } from "./connect-errors.js";
import { peerOutage } from "./peer-outage.js";

describe("a call to a peer that failed in transport", () => {
  it("is unavailable when the peer refused it, reset it or vanished mid-call, and upstream_timeout past its deadline", () => {
    const refused = new ConnectError("connect ECONNREFUSED 127.0.0.1:8082", Code.Unavailable);
    const reset = new ConnectError("read ECONNRESET", Code.Aborted);
    const closed = new ConnectError("http/2 stream closed with error code CANCEL (0x8)", Code.Canceled);
    for (const error of [refused, reset, closed]) {
      expect(peerOutage(error)).toMatchObject({ code: "unavailable", cause: error });
    }
    expect(peerOutage(new ConnectError("deadline", Code.DeadlineExceeded))?.code).toBe("upstream_timeout");
  });

  it("leaves the peer's own answers and anything else alone", () => {
    // The peer answered: its code and context travel on, even those that share a Connect code.
    expect(peerOutage(toConnectError(new AppError("revision_conflict")))).toBeUndefined();
    expect(peerOutage(toConnectError(new AppError("unavailable")))).toBeUndefined();
    expect(peerOutage(new ConnectError("bad frame", Code.Internal))).toBeUndefined();
    expect(peerOutage(new Error("not a call"))).toBeUndefined();
  });
});
