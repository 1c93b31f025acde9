import { contextFromNats, tracer, tracingActive } from "@evalp/kit";
import type { MsgHdrs } from "@nats-io/transport-node";
import { context, SpanKind, trace } from "@opentelemetry/api";

/**
 * Relays one realtime frame to the sockets held here in a span under the RPC that changed the
 * interview (its context rides the frame's NATS headers). Without tracing, just relays.
 */
export function traceFrame(
  message: { subject: string; headers?: MsgHdrs | undefined },
  evaluationId: string,
  relay: () => void,
): void {
  if (!tracingActive()) {
    relay();
    return;
  }
  const parent = contextFromNats(message.headers);
  const span = tracer.startSpan(
    "realtime frame",
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.destination.name": message.subject,
        "evalp.evaluation_id": evaluationId,
      },
    },
    parent,
  );
  try {
    context.with(trace.setSpan(parent, span), relay);
  } finally {
    span.end();
  }
}
