import type { MsgHdrs } from "@nats-io/transport-node";
import { context, SpanKind } from "@opentelemetry/api";
import {
  contextFromCarrier,
  natsTraceHeaders,
  type TraceCarrier,
  withSpan,
} from "../../telemetry/trace-context.js";

/**
 * Publishes one outbox row in a producer span under the trace the row was written in, and sends
 * that span's context in the message's headers for the consumers to continue. Without tracing,
 * publishes without headers.
 */
export function tracePublish<T>(
  row: { id: string; subject: string; trace_context: TraceCarrier | null },
  subject: string,
  publish: (headers: MsgHdrs | undefined) => Promise<T>,
): Promise<T> {
  return withSpan(
    `publish ${row.subject.split(".", 1)[0]}`,
    {
      kind: SpanKind.PRODUCER,
      parent: contextFromCarrier(row.trace_context),
      attributes: {
        "messaging.system": "nats",
        "messaging.operation.type": "send",
        "messaging.operation.name": "publish",
        "messaging.destination.name": subject,
        "messaging.message.id": row.id,
      },
    },
    async (span) => publish(span ? natsTraceHeaders(context.active()) : undefined),
  );
}
