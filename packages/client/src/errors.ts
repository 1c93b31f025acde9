import type { ErrorCode, ValidationProblem } from "./types.js";

/** What the API answered when it refused a request, as one exception a caller can catch. */
export class EvalpApiError extends Error {
  override readonly name = "EvalpApiError";
  /** The HTTP status. */
  readonly status: number;
  /**
   * The contract's error code. A request that failed validation (422 with a list of problems)
   * has `validation_error`, the problems in `context.detail` (as a WebSocket frame's error has).
   */
  readonly code: ErrorCode;
  /** The keys the code names (`required_scope`, `current_revision`, …). */
  readonly context: Record<string, unknown>;
  /** The request's id (from the body, else the `X-Request-Id` header): quote it when reporting. */
  readonly requestId: string | undefined;
  /** Seconds the server asked to wait (`Retry-After`), when it said. */
  readonly retryAfter: string | undefined;

  constructor(init: {
    status: number;
    code: ErrorCode;
    message: string;
    context?: Record<string, unknown>;
    requestId?: string | undefined;
    retryAfter?: string | undefined;
  }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.context = init.context ?? {};
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter;
  }

  /** The problems of a validation error (422), else an empty list. */
  get problems(): ValidationProblem[] {
    const detail = this.context.detail;
    return Array.isArray(detail) ? (detail as ValidationProblem[]) : [];
  }

  /** The error a response stands for, from its status, headers and (already parsed) body. */
  static fromResponse(response: Response, body: unknown): EvalpApiError {
    const headerId = response.headers.get("x-request-id") ?? undefined;
    const retryAfter = response.headers.get("retry-after") ?? undefined;
    const detail = isObject(body) ? body.detail : undefined;
    if (isObject(detail) && typeof detail.code === "string") {
      return new EvalpApiError({
        status: response.status,
        code: detail.code as ErrorCode,
        message: typeof detail.message === "string" ? detail.message : `HTTP ${response.status}`,
        context: isObject(detail.context) ? detail.context : {},
        requestId: typeof detail.request_id === "string" ? detail.request_id : headerId,
        retryAfter,
      });
    }
    if (Array.isArray(detail)) {
      const problems = detail as ValidationProblem[];
      return new EvalpApiError({
        status: response.status,
        code: "validation_error",
        message: problems.map((problem) => `${problem.loc.join(".")}: ${problem.msg}`).join("; "),
        context: { detail: problems },
        requestId: headerId,
        retryAfter,
      });
    }
    // Not the API's envelope (a proxy's page, an empty body): the status says what it can.
    return new EvalpApiError({
      status: response.status,
      code: CODE_BY_STATUS[response.status] ?? "internal",
      message: `unexpected response: HTTP ${response.status}`,
      requestId: headerId,
      retryAfter,
    });
  }
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  401: "unauthenticated",
  403: "forbidden",
  404: "not_found",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  503: "unavailable",
  504: "upstream_timeout",
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What `data` of a successful answer is; `undefined` for answers without a body (204). */
export type Unwrapped<Data> = [Exclude<Data, undefined>] extends [never]
  ? undefined
  : Exclude<Data, undefined>;

/**
 * The data of a typed call, or its failure thrown as an `EvalpApiError`:
 * `const app = await unwrap(client.POST("/v1/organizations/{organization_id}/apps", {…}))`.
 */
export async function unwrap<Result extends { data?: unknown; error?: unknown; response: Response }>(
  call: Promise<Result> | Result,
): Promise<Unwrapped<Result["data"]>> {
  const result = await call;
  if (!result.response.ok) throw EvalpApiError.fromResponse(result.response, result.error);
  return result.data as Unwrapped<Result["data"]>;
}
