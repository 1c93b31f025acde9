import { ConnectError } from "@connectrpc/connect";
import { AppError, fromConnectError, type PydanticItem } from "@evalp/kit";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { RequestValidationError } from "../validation/json-body.js";

/** The application error body (docs/errors.md). */
export function errorBody(error: AppError, requestId: string) {
  return {
    detail: { code: error.code, message: error.message, context: error.context, request_id: requestId },
  };
}

/** Fastify's own client errors that the contract names. */
const FASTIFY_CODES: Record<string, () => AppError> = {
  FST_ERR_CTP_BODY_TOO_LARGE: () => new AppError("payload_too_large", "The request body is over 1 MiB."),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () =>
    new AppError("unsupported_media_type", "Send the request body as application/json."),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () =>
    new AppError("payload_too_large", "The request body does not match its Content-Length."),
};

/** Anything thrown while serving a request, as the error the client is told about. */
export function toAppError(error: unknown): AppError {
  if (error instanceof AppError) return error;
  // A plane that dies mid-call resets the connection (aborted, no detail): 503, not a 500.
  if (error instanceof ConnectError) return fromConnectError(error);
  const code = (error as FastifyError | undefined)?.code;
  const known = code ? FASTIFY_CODES[code] : undefined;
  if (known) return known();
  return new AppError("internal", undefined, {}, { cause: error });
}

/**
 * Fastify's `frameworkErrors`: a path the router cannot take apart (a parameter that is not
 * valid percent-encoded UTF-8, or longer than any id) names no resource that exists, so it is
 * the contract's 404, with the request id, rather than the framework's own 400/414 body.
 */
export function answerUnroutablePath(_error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const error = new AppError("not_found", "No such resource.", { resource: "route" });
  void reply
    .code(404)
    .header("x-request-id", request.id)
    .type("application/json")
    .send(JSON.stringify(errorBody(error, request.id)));
}

/** Seconds a client should wait before retrying an unavailable backend. */
const RETRY_AFTER_UNAVAILABLE = "1";

/** An `input` larger than this (as JSON) is not repeated in a 422 item. */
export const MAX_INPUT_BYTES = 1024;

/**
 * The 422 items with each `input` as sent, but one too large to repeat: Pydantic repeats the
 * whole object as the input of each missing field, so a 1 MiB body missing three fields answered
 * (and an Idempotency-Key stored) 3 MiB. A string keeps its first characters and says it was cut;
 * a larger object or array is replaced by a note of its size. Equal requests still give equal bodies.
 */
export function boundedInputs(items: readonly PydanticItem[]): PydanticItem[] {
  return items.map((item) => {
    const json = JSON.stringify(item.input) ?? "";
    if (Buffer.byteLength(json) <= MAX_INPUT_BYTES) return item;
    const input =
      typeof item.input === "string"
        ? `${item.input.slice(0, 256)}… (${Buffer.byteLength(item.input)} bytes, cut)`
        : `(${Array.isArray(item.input) ? "an array" : "an object"} of ${Buffer.byteLength(json)} bytes, not repeated)`;
    return { ...item, input };
  });
}

/**
 * Error bodies are sent as strings: a 422 can be a validation list or an application error
 * (`idempotency_key_reused`), and neither may be reshaped by a route's response schema.
 *
 * The gateway alone renders error bodies: validation problems in the Pydantic shape, everything
 * else as the application envelope, and 5xx without internals (the cause is logged instead).
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: unknown, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof RequestValidationError) {
      return reply
        .code(422)
        .type("application/json")
        .send(JSON.stringify({ detail: boundedInputs(error.items) }));
    }
    const appError = toAppError(error);
    // A service that validates what only it can (an answer against its question) sends the
    // Pydantic-shaped list as `validation_error`'s `context.detail`: over HTTP it is the 422 list.
    if (appError.code === "validation_error" && Array.isArray(appError.context.detail)) {
      return reply
        .code(422)
        .type("application/json")
        .send(JSON.stringify({ detail: boundedInputs(appError.context.detail as PydanticItem[]) }));
    }
    if (appError.status >= 500) {
      request.log.error({ err: appError.cause ?? error, code: appError.code }, "request failed");
    }
    if (appError.code === "unavailable" && !appError.headers["Retry-After"]) {
      reply.header("Retry-After", RETRY_AFTER_UNAVAILABLE);
    }
    // A plane's 409 in-use (its run under the key still going) says when to ask again, as the gateway's does.
    if (appError.code === "idempotency_key_in_use" && !appError.headers["Retry-After"]) {
      reply.header("Retry-After", RETRY_AFTER_UNAVAILABLE);
    }
    for (const [name, value] of Object.entries(appError.headers)) reply.header(name, value);
    return reply
      .code(appError.status)
      .type("application/json")
      .send(JSON.stringify(errorBody(appError, request.id)));
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new AppError("not_found", `No route ${request.method} ${request.url.split("?")[0]}.`, {
      resource: "route",
    });
    return reply
      .code(404)
      .type("application/json")
      .send(JSON.stringify(errorBody(error, request.id)));
  });
}
