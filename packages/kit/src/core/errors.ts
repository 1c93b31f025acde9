import { Code } from "@connectrpc/connect";

/**
 * The error catalog (docs/errors.md#codes): each public `code`, the HTTP status the gateway renders
 * for it and the Connect code it crosses the wire with. One table, read by both sides.
 */
export const ERROR_CATALOG = {
  unauthenticated: { status: 401, connect: Code.Unauthenticated },
  api_key_revoked: { status: 401, connect: Code.Unauthenticated },
  token_expired: { status: 401, connect: Code.Unauthenticated },
  invalid_credentials: { status: 401, connect: Code.Unauthenticated },
  session_superseded: { status: 401, connect: Code.Unauthenticated },
  forbidden: { status: 403, connect: Code.PermissionDenied },
  not_found: { status: 404, connect: Code.NotFound },
  subject_erased: { status: 404, connect: Code.NotFound },
  already_exists: { status: 409, connect: Code.AlreadyExists },
  revision_conflict: { status: 409, connect: Code.Aborted },
  invalid_transition: { status: 409, connect: Code.FailedPrecondition },
  bundle_not_published: { status: 409, connect: Code.FailedPrecondition },
  quota_exceeded: { status: 409, connect: Code.ResourceExhausted },
  idempotency_key_in_use: { status: 409, connect: Code.Aborted },
  client_answer_conflict: { status: 409, connect: Code.AlreadyExists },
  follow_up_limit_reached: { status: 409, connect: Code.FailedPrecondition },
  proposal_pending: { status: 409, connect: Code.FailedPrecondition },
  resolve_not_allowed: { status: 409, connect: Code.FailedPrecondition },
  agent_owns_voice: { status: 409, connect: Code.FailedPrecondition },
  result_not_ready: { status: 409, connect: Code.FailedPrecondition },
  invitation_expired: { status: 410, connect: Code.FailedPrecondition },
  reset_token_expired: { status: 410, connect: Code.FailedPrecondition },
  payload_too_large: { status: 413, connect: Code.InvalidArgument },
  unsupported_media_type: { status: 415, connect: Code.InvalidArgument },
  idempotency_key_reused: { status: 422, connect: Code.InvalidArgument },
  validation_error: { status: 422, connect: Code.InvalidArgument },
  batch_too_large: { status: 422, connect: Code.InvalidArgument },
  bundle_invalid: { status: 422, connect: Code.InvalidArgument },
  expression_invalid: { status: 422, connect: Code.InvalidArgument },
  component_kind_mismatch: { status: 422, connect: Code.InvalidArgument },
  rate_limited: { status: 429, connect: Code.ResourceExhausted },
  internal: { status: 500, connect: Code.Internal },
  unavailable: { status: 503, connect: Code.Unavailable },
  upstream_timeout: { status: 504, connect: Code.DeadlineExceeded },
} as const satisfies Record<string, { status: number; connect: Code }>;

export type ErrorCode = keyof typeof ERROR_CATALOG;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CATALOG, value);
}

/** Messages a client reads when nothing more specific is said. */
const DEFAULT_MESSAGES: Partial<Record<ErrorCode, string>> = {
  unauthenticated: "Authentication required.",
  forbidden: "Not allowed.",
  not_found: "Not found.",
  internal: "Internal error.",
  unavailable: "Service unavailable, try again shortly.",
  upstream_timeout: "The request took too long.",
};

/**
 * An outcome the client is told about, by its contract code. Thrown anywhere in a service or
 * the gateway; the gateway renders it as `{"detail": {code, message, context, request_id}}`.
 */
export class AppError extends Error {
  override name = "AppError";
  readonly code: ErrorCode;
  readonly context: Record<string, unknown>;
  /** Response headers that belong to this outcome (`Retry-After` on 409 in-use, 429, 503). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    message?: string,
    context: Record<string, unknown> = {},
    options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message ?? DEFAULT_MESSAGES[code] ?? code.replaceAll("_", " "), { cause: options.cause });
    this.code = code;
    this.context = context;
    this.headers = options.headers ?? {};
  }

  get status(): number {
    return ERROR_CATALOG[this.code].status;
  }
}

/** 404 for a resource the principal may not know exists (docs/errors.md: never reveal it). */
export function notFound(resource: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("not_found", `${resource.replaceAll("_", " ")} not found.`, { resource, ...extra });
}
