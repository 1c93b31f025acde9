import { Code, ConnectError } from "@connectrpc/connect";

/*
 * How a failure of HTTP/2 itself reads as a Connect error, as connect-node reads it (its mapping is
 * not exported), so that callers (`transportFailure`, `neverReached`) see the same codes and causes
 * from the platform's own client and server as from the stock ones.
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

/** A stream reset by the peer (or by HTTP/2 on its behalf), as connect-node reports it; undefined when it is none. */
export function errorFromReset(rstCode: number, cause?: unknown): ConnectError | undefined {
  const [name, code] = RESET_CODES[rstCode] ?? [String(rstCode), undefined];
  if (code === undefined) return undefined;
  return new ConnectError(
    `http/2 stream closed with error code ${name} (0x${rstCode.toString(16)})`,
    code,
    undefined,
    undefined,
    cause,
  );
}

const ABORTED = new Set([
  "ERR_STREAM_WRITE_AFTER_END",
  "ERR_STREAM_DESTROYED",
  "ERR_HTTP2_INVALID_STREAM",
  "ECONNRESET",
]);
// The connection was refused or the name not found; the stream was sent away before it was opened.
const UNAVAILABLE = new Set([
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ECONNREFUSED",
  "ERR_HTTP2_GOAWAY_SESSION",
]);

/**
 * Any failure of a Node.js stream or connection as a ConnectError with the failure as its cause:
 * aborted when the connection was reset or the stream destroyed, unavailable when it could not be
 * made, the reset's code when the peer reset the stream, internal otherwise.
 */
export function errorFromNode(reason: unknown): ConnectError {
  if (reason instanceof ConnectError) return reason;
  let code = Code.Internal;
  for (let cause: unknown = reason, depth = 0; cause instanceof Error && depth < 5; depth++) {
    const nodeCode = (cause as { code?: unknown }).code;
    if (typeof nodeCode === "string") {
      if (ABORTED.has(nodeCode)) {
        code = Code.Aborted;
        break;
      }
      if (UNAVAILABLE.has(nodeCode)) {
        code = Code.Unavailable;
        break;
      }
      if (nodeCode === "ERR_HTTP2_STREAM_ERROR") {
        // "Stream closed with error code NGHTTP2_REFUSED_STREAM": the reset's own code.
        const message = cause.message;
        const reset = RESET_CODES.find(([name]) => message.endsWith(`NGHTTP2_${name}`));
        if (reset?.[1] !== undefined) code = reset[1];
        break;
      }
    }
    cause = cause.cause;
  }
  const error = ConnectError.from(reason, code);
  if (error !== reason) error.cause = reason;
  return error;
}
