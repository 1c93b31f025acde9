import { ERROR_CATALOG } from "@evalp/kit";
import { type TSchema, Type } from "@sinclair/typebox";
import type { RouteAccess } from "../http/principal.js";
import { ref } from "./schemas.js";
import { named } from "./wire.js";

/** The application error body (docs/errors.md); `code` is one of the catalog's. */
export const ApplicationError = Type.Object(
  {
    detail: Type.Object({
      code: Type.Unsafe<string>({ type: "string", enum: Object.keys(ERROR_CATALOG) }),
      message: Type.String(),
      context: Type.Record(Type.String(), Type.Unknown()),
      request_id: Type.String(),
    }),
  },
  named("ApplicationError", "An error (docs/errors.md)."),
);

/** The validation error body (docs/errors.md): one item per problem of the request. */
export const ValidationError = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
        ctx: Type.Record(Type.String(), Type.Unknown()),
        input: Type.Unknown(),
      }),
    ),
  },
  named("ValidationError", "What is wrong with a request, item by item (docs/errors.md)."),
);

const text = (description: string) => ({ type: "string", description });

/** Headers every response carries. */
const EVERY_RESPONSE = {
  "X-Request-Id": text("The request's id (the one sent, or a new one): quote it when reporting a problem."),
  "RateLimit-Limit": text("Requests allowed in the current window."),
  "RateLimit-Remaining": text("Requests left in the current window."),
  "RateLimit-Reset": text("Seconds until the window resets."),
};

const RETRY_AFTER = { "Retry-After": text("Seconds to wait before trying again.") };

/** What each error status means, as the document describes it. */
const ERROR_MEANINGS: Record<number, string> = {
  401: "No valid credential (missing, unknown, revoked or expired).",
  403: "The credential may not do this (scope or role).",
  404: "The resource does not exist, or is not the caller's to see.",
  409: "Conflicts with the resource's current state, or (`idempotency_key_in_use`) a request with this Idempotency-Key is still being answered.",
  410: "The link or token has expired.",
  413: "The body is larger than 1 MiB.",
  415: "The body is not `application/json`.",
  422: "The request is invalid: each problem is an item of `detail` (or an application error).",
  429: "Too many requests: wait for `Retry-After` seconds.",
  503: "A part of the platform is unavailable: retry after `Retry-After` seconds (with the same Idempotency-Key).",
  504: "The platform did not answer in time; the change may or may not have been made (retry with the same Idempotency-Key).",
};

/**
 * The success response of a route: its body (none for 204), what it means, and its headers
 * (`idempotent`: a change that honours an Idempotency-Key, docs/idempotency.md).
 */
export function successResponse(description: string, body: TSchema | undefined, idempotent: boolean): object {
  const headers = !idempotent
    ? EVERY_RESPONSE
    : {
        ...EVERY_RESPONSE,
        "Idempotent-Replayed": text(
          "`true` when this is the stored answer to an earlier request with this Idempotency-Key.",
        ),
      };
  return body ? { ...body, description, headers } : { type: "null", description, headers };
}

/** A success response whose body is text of `mediaType` (a guide's markdown), not JSON. */
export function textResponse(description: string, mediaType: string): object {
  return { description, headers: EVERY_RESPONSE, content: { [mediaType]: { schema: { type: "string" } } } };
}

/**
 * The error responses of a route: the ones every route can give, those of its access (a
 * credential: 401, 403; an Idempotency-Key: 409 while its first request is being answered) and
 * of a body (413, 415), and `extra`. `meanings` replaces the common description of a status.
 */
export function errorResponses(
  access: RouteAccess,
  hasBody: boolean,
  extra: number[],
  honoursIdempotencyKey: boolean,
  meanings: Record<number, string> = {},
): Record<number, object> {
  const statuses = new Set([404, 422, 429, 503, 504, ...extra]);
  if (honoursIdempotencyKey) statuses.add(409);
  if (hasBody) {
    statuses.add(413);
    statuses.add(415);
  }
  if (access.auth !== "none") {
    statuses.add(401);
    statuses.add(403);
  }
  const responses: Record<number, object> = {};
  for (const status of [...statuses].sort()) {
    const headers = status === 429 || status === 503 ? { ...EVERY_RESPONSE, ...RETRY_AFTER } : EVERY_RESPONSE;
    const body =
      status === 422 ? Type.Union([ref(ValidationError), ref(ApplicationError)]) : ref(ApplicationError);
    responses[status] = { ...body, description: meanings[status] ?? ERROR_MEANINGS[status], headers };
  }
  return responses;
}
