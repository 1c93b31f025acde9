import { type MsgHdrs, headers as natsHeaders } from "@nats-io/transport-node";
import {
  type Attributes,
  type Context,
  context,
  propagation,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type TextMapGetter,
  type TextMapSetter,
  trace,
} from "@opentelemetry/api";
import { tracingActive } from "./telemetry.js";

/*
 * How a trace crosses what is not an HTTP call: the W3C `traceparent`/`tracestate` of a span,
 * kept in an outbox row or a delivery row (`trace_context`, a JSON object of those headers) and
 * in NATS message headers, then taken up again on the other side as the parent of its span.
 */

/** The platform's own spans (the instrumentations have theirs). */
export const tracer = trace.getTracer("evalp");

/** A trace context as stored with a row: `{ traceparent, tracestate? }`. */
export type TraceCarrier = Record<string, string>;

/** The active span's context to store with a row; null when no span is being recorded. */
export function currentTraceCarrier(): TraceCarrier | null {
  return traceCarrierOf(context.active());
}

/** The context of `ctx`'s span to store with a row; null when it has none or tracing is off. */
export function traceCarrierOf(ctx: Context): TraceCarrier | null {
  if (!tracingActive()) return null;
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent ? carrier : null;
}

/**
 * The context to start a span in whose parent is what `carrier` holds: never the span that
 * happens to be active (a poller's), and the span is a root when the carrier is empty.
 */
export function contextFromCarrier(carrier: TraceCarrier | null | undefined): Context {
  const base = trace.deleteSpan(context.active());
  return carrier ? propagation.extract(base, carrier) : base;
}

const natsGetter: TextMapGetter<MsgHdrs> = {
  keys: (carrier) => carrier.keys(),
  get: (carrier, key) => (carrier.has(key) ? carrier.get(key) : undefined),
};
const natsSetter: TextMapSetter<MsgHdrs> = { set: (carrier, key, value) => carrier.set(key, value) };

/** NATS headers carrying `ctx`'s span (with `into`'s other headers), or `into` as it was when tracing is off. */
export function natsTraceHeaders(ctx: Context, into?: MsgHdrs): MsgHdrs | undefined {
  if (!tracingActive()) return into;
  const carrier = into ?? natsHeaders();
  propagation.inject(ctx, carrier, natsSetter);
  return carrier;
}

/** The context a received NATS message's headers carry (see `contextFromCarrier`). */
export function contextFromNats(headers: MsgHdrs | undefined): Context {
  const base = trace.deleteSpan(context.active());
  return headers ? propagation.extract(base, headers, natsGetter) : base;
}

/** Marks a span failed with what was thrown. */
export function recordFailure(span: Span, error: unknown): void {
  span.setStatus({
    code: SpanStatusCode.ERROR,
    message: error instanceof Error ? error.message : String(error),
  });
  if (error instanceof Error) span.recordException(error);
}

/**
 * Runs `work` in a span of its own under `parent` (ended when it settles, failed when it throws);
 * without tracing, just runs it.
 */
export async function withSpan<T>(
  name: string,
  options: { kind?: SpanKind; attributes?: Attributes; parent?: Context },
  work: (span: Span | null) => Promise<T>,
): Promise<T> {
  if (!tracingActive()) return work(null);
  const span = tracer.startSpan(
    name,
    { kind: options.kind, attributes: options.attributes },
    options.parent ?? context.active(),
  );
  try {
    return await context.with(trace.setSpan(options.parent ?? context.active(), span), () => work(span));
  } catch (error) {
    recordFailure(span, error);
    throw error;
  } finally {
    span.end();
  }
}
