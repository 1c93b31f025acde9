import { Code, ConnectError } from "@connectrpc/connect";

/*
 * How a failure of HTTP/2 itself reads as a Connect error, with the codes connect-node gives (its
 * mapping is not exported), so that callers see the same codes from the platform's own client and
 * server as from the stock ones. Everything is decided by an error's `code` (Node's `ECONNREFUSED`,
 * `ERR_HTTP2_GOAWAY_SESSION`, a reset's number), never by its message, whose words Node may change.
 */

/** HTTP/2's error codes (RFC 9113 §7) by number, and the Connect code connect-node gives each. */
const RESET_CODES: readonly (readonly [string, Code | undefined])[] = [
  ["NO_ERROR", undefined],
  ["PROTOCOL_ERROR", Code.Internal],
  ["INTERNAL_ERROR", Code.Internal],
  ["FLOW_CONTROL_ERROR", Code.Internal],
  ["SETTINGS_TIMEOUT", Code.Internal],
  // Not a failure of the call: gRPC's mapping leaves it out.
  ["STREAM_CLOSED", undefined],
  ["FRAME_SIZE_ERROR", Code.Internal],
  ["REFUSED_STREAM", Code.Unavailable],
  ["CANCEL", Code.Canceled],
  ["COMPRESSION_ERROR", Code.Internal],
  ["CONNECT_ERROR", Code.Internal],
  ["ENHANCE_YOUR_CALM", Code.ResourceExhausted],
  ["INADEQUATE_SECURITY", Code.PermissionDenied],
  ["HTTP_1_1_REQUIRED", Code.PermissionDenied],
];

/**
 * A stream reset by the peer (or by HTTP/2 on its behalf), kept as the cause of the Connect error
 * that reports it: `code` names the reset as Node's constants do (`NGHTTP2_REFUSED_STREAM`), so
 * that whoever decides on the failure reads the reset itself.
 */
export class StreamReset extends Error {
  readonly rstCode: number;
  readonly code: string;

  constructor(rstCode: number, cause?: unknown) {
    const name = RESET_CODES[rstCode]?.[0] ?? String(rstCode);
    super(`stream reset with ${name} (0x${rstCode.toString(16)})`, { cause });
    this.name = "StreamReset";
    this.rstCode = rstCode;
    this.code = `NGHTTP2_${name}`;
  }
}

/**
 * The `code` of the error a session is destroyed with when its peer left a PING unanswered: the
 * peer stopped answering (hung, or gone without closing its socket).
 */
export const PING_TIMEOUT = "ERR_HTTP2_PING_TIMEOUT";

/** The error a session whose PING went unanswered for `timeoutMs` is destroyed with. */
export function pingTimeout(timeoutMs: number): Error & { code: string } {
  return Object.assign(new Error(`the peer left a PING unanswered for ${timeoutMs} ms`), {
    code: PING_TIMEOUT,
  });
}

/** A stream reset, as connect-node reports it; undefined when the reset is none it knows as a failure. */
export function errorFromReset(rstCode: number, cause?: unknown): ConnectError | undefined {
  const [name, code] = RESET_CODES[rstCode] ?? [String(rstCode), undefined];
  if (code === undefined) return undefined;
  return new ConnectError(
    `http/2 stream closed with error code ${name} (0x${rstCode.toString(16)})`,
    code,
    undefined,
    undefined,
    new StreamReset(rstCode, cause),
  );
}

/**
 * Why a server's call was given up when its stream closed before the answer: the caller's reset,
 * or (closed without one, the connection gone) Aborted.
 */
export function errorFromUnansweredClose(stream: { rstCode?: number }): ConnectError {
  return (
    errorFromReset(stream.rstCode ?? 0) ??
    new ConnectError("the stream closed before the answer", Code.Aborted)
  );
}

/** Node's codes for a connection reset or a stream destroyed under a call: the call was cut off. */
const ABORTED = new Set([
  "ERR_STREAM_WRITE_AFTER_END",
  "ERR_STREAM_DESTROYED",
  "ERR_HTTP2_INVALID_STREAM",
  "ECONNRESET",
  "EPIPE",
]);
/**
 * Node's codes for a peer that could not be reached or stopped answering: the connection refused,
 * the name not found, the connection sent away or destroyed before the stream was sent (GOAWAY,
 * a pending stream canceled), a PING left unanswered.
 */
const UNAVAILABLE = new Set([
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNREFUSED",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ERR_HTTP2_GOAWAY_SESSION",
  "ERR_HTTP2_INVALID_SESSION",
  "ERR_HTTP2_STREAM_CANCEL",
  PING_TIMEOUT,
]);

/** The string `code` of an error (Node's and `StreamReset`'s), if it has one. */
export function codeOf(error: Error): string | undefined {
  const code: unknown = Reflect.get(error, "code");
  return typeof code === "string" ? code : undefined;
}

/**
 * Any failure of a Node.js stream or connection as a ConnectError with the failure as its cause,
 * by the first `code` found along its causes: aborted when the connection was reset or the stream
 * destroyed, unavailable when the peer could not be reached or stopped answering, the reset's
 * code for a `StreamReset`, internal otherwise.
 */
export function errorFromNode(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  let code = Code.Internal;
  for (let cause: unknown = reason, depth = 0; cause instanceof Error && depth < 5; depth++) {
    if (cause instanceof StreamReset) {
      code = RESET_CODES[cause.rstCode]?.[1] ?? Code.Internal;
      break;
    }
    const nodeCode = codeOf(cause);
    if (nodeCode !== undefined && ABORTED.has(nodeCode)) {
      code = Code.Aborted;
      break;
    }
    if (nodeCode !== undefined && UNAVAILABLE.has(nodeCode)) {
      code = Code.Unavailable;
      break;
    }
    cause = cause.cause;
  }
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}
