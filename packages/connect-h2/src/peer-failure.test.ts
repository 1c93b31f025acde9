import { StringValueSchema } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { errorFromNode, errorFromReset, PING_TIMEOUT, pingTimeout } from "./h2-errors.js";
import { neverReached, transportFailure } from "./peer-failure.js";

/** An error as Node makes them: its kind in `code`, words for people in its message. */
const nodeError = (code: string, message = "whatever Node says", cause?: unknown) =>
  Object.assign(new Error(message, { cause }), { code });

describe("a failure of HTTP/2 or of the connection", () => {
  it.each([
    // code, Connect code, provably never reached the peer (so a write may go to another replica)
    ["ECONNREFUSED", Code.Unavailable, true],
    ["ERR_HTTP2_GOAWAY_SESSION", Code.Unavailable, true],
    ["ERR_HTTP2_INVALID_SESSION", Code.Unavailable, true],
    ["ERR_HTTP2_STREAM_CANCEL", Code.Unavailable, true],
    ["ENOTFOUND", Code.Unavailable, false],
    ["ETIMEDOUT", Code.Unavailable, false],
    [PING_TIMEOUT, Code.Unavailable, false],
    ["ECONNRESET", Code.Aborted, false],
    ["EPIPE", Code.Aborted, false],
    ["ERR_STREAM_DESTROYED", Code.Aborted, false],
    ["ERR_HTTP2_INVALID_STREAM", Code.Aborted, false],
    ["ERR_SOMETHING_ELSE", Code.Internal, false],
  ])("%s is read by its code: Connect code %s, never reached: %s", (code, connectCode, never) => {
    const error = errorFromNode(nodeError(code));
    expect(error.code).toBe(connectCode);
    expect(neverReached(error)).toBe(never);
    // Found among the causes too, as Node nests them (a pending stream canceled by its session's error).
    const nested = errorFromNode(nodeError("ERR_WRAPPER", "wrapped", nodeError(code)));
    expect(nested.code).toBe(connectCode);
    expect(neverReached(nested)).toBe(never);
  });

  it.each([
    ["REFUSED_STREAM", 0x7, Code.Unavailable, true],
    ["CANCEL", 0x8, Code.Canceled, false],
    ["INTERNAL_ERROR", 0x2, Code.Internal, false],
    ["ENHANCE_YOUR_CALM", 0xb, Code.ResourceExhausted, false],
  ])("a stream reset with %s is read by the reset's number", (_, rstCode, connectCode, never) => {
    const error = errorFromReset(rstCode);
    expect(error?.code).toBe(connectCode);
    expect(neverReached(error)).toBe(never);
    expect(errorFromNode(error?.cause).code).toBe(connectCode);
  });

  it("is never judged by its words: a message naming REFUSED_STREAM proves nothing", () => {
    const words = nodeError("ERR_HTTP2_STREAM_ERROR", "Stream closed with error code NGHTTP2_REFUSED_STREAM");
    expect(neverReached(words)).toBe(false);
    expect(neverReached(new ConnectError("connect ECONNREFUSED 127.0.0.1:1", Code.Unavailable))).toBe(false);
  });

  it("a stream reset with no error is no failure", () => {
    expect(errorFromReset(0)).toBeUndefined();
  });

  it("a PING left unanswered says so", () => {
    expect(pingTimeout(200)).toMatchObject({ code: PING_TIMEOUT });
  });
});

describe("transportFailure", () => {
  it("is unavailable for a peer that refused, reset or vanished, deadline past its deadline", () => {
    for (const code of [Code.Unavailable, Code.Aborted, Code.Canceled]) {
      expect(transportFailure(new ConnectError("gone", code))).toBe("unavailable");
    }
    expect(transportFailure(new ConnectError("late", Code.DeadlineExceeded))).toBe("deadline");
  });

  it("leaves the peer's own answers (with details) and anything else alone", () => {
    const answered = new ConnectError("busy", Code.Unavailable, undefined, [
      { desc: StringValueSchema, value: { value: "busy" } },
    ]);
    expect(transportFailure(answered)).toBeUndefined();
    expect(transportFailure(new ConnectError("bad frame", Code.Internal))).toBeUndefined();
    expect(transportFailure(new Error("not a call"))).toBeUndefined();
  });
});
