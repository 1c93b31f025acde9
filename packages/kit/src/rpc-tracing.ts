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
import { tracingActive } from "./telemetry.js";
import { withSpan } from "./trace-context.js";

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

function rpcAttributes(req: { service: { typeName: string }; method: { name: string } }): Attributes {
  return { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name };
}

/** The Connect code of a failure, as a span attribute (`not_found`, …). */
function errorCode(error: unknown): Attributes {
  const code = ConnectError.from(error).code;
  return {
    "rpc.connect_rpc.error_code": Code[code]?.replace(
      /[A-Z]/g,
      (c, at) => `${at ? "_" : ""}${c.toLowerCase()}`,
    ),
  };
}

/** Client interceptor: one client span per call, its context sent along. */
export const traceClientInterceptor: Interceptor = (next) => async (req) => {
  if (!tracingActive()) return next(req);
  return withSpan(
    `${req.service.typeName}/${req.method.name}`,
    { kind: SpanKind.CLIENT, attributes: rpcAttributes(req) },
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
export const traceServerInterceptor: Interceptor = (next) => async (req) => {
  if (!tracingActive()) return next(req);
  const parent = propagation.extract(trace.deleteSpan(context.active()), req.header, headerGetter);
  return withSpan(
    `${req.service.typeName}/${req.method.name}`,
    { kind: SpanKind.SERVER, attributes: rpcAttributes(req), parent },
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
