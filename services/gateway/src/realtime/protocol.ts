import { AppError, type PydanticItem } from "@evalp/kit";
import type { WebSocket } from "ws";
import { parseJsonBody, RequestValidationError } from "../validation/json-body.js";

// The realtime doors' protocol (docs/interview.md): how a socket is opened, what its frames look
// like on the way out, and how a frame that is not what it should be is answered.

/**
 * Close code when the socket's token expires, or its agent session is superseded, or its
 * participant session is revoked or superseded, while it is open (the application range).
 */
export const TOKEN_EXPIRED_CLOSE = 4401;

/** Browsers must be answered with one of the subprotocols they offered: any but the token, else it. */
export function selectProtocol(protocols: Set<string>): string | false {
  const offered = [...protocols];
  return offered.find((protocol) => !protocol.startsWith("bearer.")) ?? offered[0] ?? false;
}

/** Sends a frame, as JSON, while the socket is open. */
export function sendFrame(socket: WebSocket, message: unknown): void {
  if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
}

/** `{"type":"error","id"?,"code","message","context"}`: `id` when the refused frame had one. */
export function sendError(socket: WebSocket, error: AppError, id?: unknown): void {
  sendFrame(socket, {
    type: "error",
    ...(typeof id === "string" ? { id } : {}),
    code: error.code,
    message: error.message,
    context: error.context,
  });
}

/** Validation problems of a frame: the request's `body` is the socket's `frame`. */
export function atFrame(items: readonly PydanticItem[]): PydanticItem[] {
  return items.map((item) => ({ ...item, loc: ["frame", ...item.loc.slice(1)] }));
}

/** What a frame that fails validation is answered (the socket stays open). */
export function invalidFrame(problems: PydanticItem[]): AppError {
  return new AppError("validation_error", "The frame failed validation.", { detail: problems });
}

/** A text frame's JSON value, or the error of one that is no JSON (as a body's would be, at `frame`). */
export function parseFrame(text: string): { value: unknown } | { error: AppError } {
  try {
    return { value: parseJsonBody(text) };
  } catch (error) {
    if (!(error instanceof RequestValidationError)) throw error;
    return { error: invalidFrame(atFrame(error.items)) };
  }
}
