import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  type Attributes,
  context,
  propagation,
  SpanKind,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";
import { type RpcCall, rpcAttributes, rpcErrorAttributes } from "../telemetry/semconv.js";
import { semanticConventions, tracingActive } from "../telemetry/telemetry.js";
import { withSpan } from "../telemetry/trace-context.js";

/*
 * Traces across Connect RPCs. The calls between the planes are HTTP/2, which the http
 * instrumentation does not see: the caller's interceptor makes a client span and sends its
 * context as `traceparent`/`tracestate` headers, the server's takes it up and serves the call in a
 * server span under it.
 */

const headerSetter: TextMapSetter<Headers> = { set: (carrier, key, value) => carrier.set(key, value) };
const headerGetter: TextMapGetter<Headers> = {
  keys: (carrier) => [...carrier.keys()],
  get: (carrier, key) => carrier.get(key) ?? undefined,
};

function callOf(req: { service: { typeName: string }; method: { name: string }; url?: string }): RpcCall {
  return { service: req.service.typeName, method: req.method.name, ...(req.url && { url: req.url }) };
}

/** The Connect code of a failure (`not_found`, …), on the span as the RPC conventions name it. */
function errorCode(error: unknown): Attributes {
  const code = Code[ConnectError.from(error).code] ?? "unknown";
  return rpcErrorAttributes(
    code.replace(/[A-Z]/g, (c, at) => `${at ? "_" : ""}${c.toLowerCase()}`),
    semanticConventions().rpc,
  );
}

/** Client interceptor: one client span per call, its context sent along. */
export const traceClientInterceptor: Interceptor = (next) => (req) => {
  // Without tracing, the call passes straight through: no span, and no promise of this step's.
  if (!tracingActive()) return next(req);
  return withSpan(
    `${req.service.typeName}/${req.method.name}`,
    { kind: SpanKind.CLIENT, attributes: rpcAttributes(callOf(req), semanticConventions().rpc) },
    async (span) => {
      propagation.inject(context.active(), req.header, headerSetter);
      try {
        return await next(req);
      } catch (error) {
        span?.setAttributes(errorCode(error));
        throw error;
      }
    },
  );
};

/** Server interceptor: serves each call in a server span under the caller's (outermost but metrics). */
export const traceServerInterceptor: Interceptor = (next) => (req) => {
  if (!tracingActive()) return next(req);
  const parent = propagation.extract(trace.deleteSpan(context.active()), req.header, headerGetter);
  return withSpan(
    `${req.service.typeName}/${req.method.name}`,
    {
      kind: SpanKind.SERVER,
      // The server's span names no server address: the caller's URL is its own business.
      attributes: rpcAttributes(
        { service: req.service.typeName, method: req.method.name },
        semanticConventions().rpc,
      ),
      parent,
    },
    async (span) => {
      try {
        return await next(req);
      } catch (error) {
        span?.setAttributes(errorCode(error));
        throw error;
      }
    },
  );
};
