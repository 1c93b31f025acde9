import {
  Code,
  ConnectError,
  type ContextValues,
  createContextKey,
  type HandlerContext,
  type Interceptor,
} from "@connectrpc/connect";
import type { Logger } from "pino";
import {
  IDEMPOTENCY_FINGERPRINT_HEADER,
  IDEMPOTENCY_ID_HEADER,
  IDEMPOTENCY_SEAL_HEADER,
  type IdempotencyMetadata,
} from "../idempotency/idempotency-keys.js";

/** Header that carries the gateway's request id to every service it calls (docs/http.md). */
export const REQUEST_ID_HEADER = "x-request-id";
/** Headers that say who acts, so that services can write audit events without re-authenticating. */
export const ACTOR_KIND_HEADER = "x-evalp-actor-kind";
export const ACTOR_ID_HEADER = "x-evalp-actor-id";
/**
 * The process that called, as its verified service token names it (service-tokens.ts): set by the
 * token check after removing whatever the request carried, so a handler may rely on it.
 */
export const CALLER_HEADER = "x-evalp-caller";

/** Who a request acts for, as services see it. */
export type Actor = { kind: string; id: string };

/** What a service knows about the request an RPC serves. */
export type RequestContext = { requestId: string | null; actor: Actor | null; logger: Logger };

const contextKey = createContextKey<RequestContext | null>(null, { description: "evalp request context" });

/** The request context set by `requestContextInterceptor`; RPC handlers read it from `ctx.values`. */
export function requestContext(values: ContextValues): RequestContext {
  const context = values.get(contextKey);
  if (!context) throw new Error("requestContextInterceptor is not installed");
  return context;
}

export function requestLogger(values: ContextValues): Logger {
  return requestContext(values).logger;
}

/** Services asked every few seconds by probes and balancers: their calls are logged at debug. */
const QUIET_SERVICES = new Set(["evalp.common.v1.HealthService", "grpc.health.v1.Health"]);

/**
 * Server interceptor: reads request id and actor from metadata and binds a child logger to them,
 * made when first used: a call that logs nothing (the RPC line below off at the level set, no
 * handler logging) makes none.
 */
export function requestContextInterceptor(logger: Logger): Interceptor {
  return (next) => (req) => {
    const requestId = req.header.get(REQUEST_ID_HEADER);
    const kind = req.header.get(ACTOR_KIND_HEADER);
    const id = req.header.get(ACTOR_ID_HEADER);
    let child: Logger | undefined;
    const bound = () => {
      child ??= logger.child({ request_id: requestId ?? undefined, rpc: req.method.name });
      return child;
    };
    req.contextValues.set(contextKey, {
      requestId,
      actor: kind && id ? { kind, id } : null,
      get logger() {
        return bound();
      },
    });
    // One line per RPC, so the gateway's request id can be followed into every service it
    // touched; readiness polls would drown the log at info. Below the level set, the call passes
    // straight through.
    const level = QUIET_SERVICES.has(req.service.typeName) ? "debug" : "info";
    if (!logger.isLevelEnabled(level)) return next(req);
    const started = performance.now();
    const line = (code: string) =>
      bound()[level]({ code, duration_ms: Math.round((performance.now() - started) * 10) / 10 }, "rpc");
    return next(req).then(
      (res) => {
        line("ok");
        return res;
      },
      (error: unknown) => {
        line(error instanceof ConnectError ? Code[error.code] : "unknown");
        throw error;
      },
    );
  };
}

/** What a client call carries; the gateway sets it per request. */
export type CallMetadata = {
  requestId: string;
  actor?: Actor | undefined;
  /** The request's Idempotency-Key, on the gateway's calls for a request that holds one. */
  idempotency?: IdempotencyMetadata | undefined;
};

/** Builds the headers of one outgoing call from its metadata. */
export function metadataHeaders(meta: CallMetadata): Record<string, string> {
  const headers: Record<string, string> = { [REQUEST_ID_HEADER]: meta.requestId };
  if (meta.actor) {
    headers[ACTOR_KIND_HEADER] = meta.actor.kind;
    headers[ACTOR_ID_HEADER] = meta.actor.id;
  }
  if (meta.idempotency) {
    headers[IDEMPOTENCY_ID_HEADER] = meta.idempotency.id;
    headers[IDEMPOTENCY_FINGERPRINT_HEADER] = meta.idempotency.fingerprint;
    headers[IDEMPOTENCY_SEAL_HEADER] = meta.idempotency.sealKey;
  }
  return headers;
}

/** The metadata of a call made on behalf of the request being served (its request id and actor). */
export function forwardedCall(ctx: HandlerContext) {
  const context = requestContext(ctx.values);
  return {
    headers: metadataHeaders({ requestId: context.requestId ?? "", actor: context.actor ?? undefined }),
  };
}
