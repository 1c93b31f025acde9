import {
  contextFromNats,
  createDurableConsumer,
  type DurableConsumer,
  EVENTS_CONSUMER,
  type EventEnvelope,
  type Logger,
  type NatsConnection,
  newId,
  type Pool,
  type Registry,
  recordFailure,
  type StreamRoute,
  type TraceCarrier,
  traceCarrierOf,
  tracer,
  tracingActive,
} from "@evalp/kit";
import { type Context, context, type Span, SpanKind, trace } from "@opentelemetry/api";
import { insertEventDeliveries, type NewDelivery } from "./db/deliveries.js";
import { subscribedEndpoints } from "./db/endpoints.js";
import { isEnvelope } from "./event-body.js";

/** A message not acked within this time is delivered again (to this or another replica). */
const ACK_WAIT_MS = 10_000;
/** Messages handed to this plane and not yet acked, across its replicas. */
const MAX_ACK_PENDING = 1_000;
const BATCH = 256;

/**
 * Consumes the events stream with a durable consumer and turns each event into one delivery per
 * matching enabled endpoint (`event_types` naming its type, or `*`) that existed when the event
 * was emitted. One transaction stores a batch's events and their deliveries, and only after it
 * commits are the messages acked, so a crash at any moment loses nothing and a redelivered
 * message finds its deliveries already there (unique per endpoint and event).
 */
export function createEventConsumer(options: {
  nc: NatsConnection;
  pool: Pool;
  logger: Logger;
  route: StreamRoute;
  /** Called after deliveries were stored: the dispatcher has work. */
  onStored: () => void;
  /** Where the consumer's backlog is sampled. */
  metrics?: Registry;
}): DurableConsumer {
  return createDurableConsumer<Consumed>({
    nc: options.nc,
    route: options.route,
    durable: EVENTS_CONSUMER,
    logger: options.logger.child({ component: "event-consumer" }),
    ackWaitMs: ACK_WAIT_MS,
    maxAckPending: MAX_ACK_PENDING,
    batch: BATCH,
    ...(options.metrics && { metrics: options.metrics }),
    decode: (message) => {
      const event: unknown = message.json();
      return isEnvelope(event) ? { event, trace: contextFromNats(message.headers) } : null;
    },
    async handle(batch) {
      const events = new Map(batch.map((consumed) => [consumed.event.id, consumed]));
      await consumeTraced([...events.values()], (traced) => storeEvents(options.pool, traced));
      options.onStored();
      return undefined;
    },
  });
}

/** An event as received, with the trace its publisher sent along. */
type Consumed = { event: EventEnvelope; trace: Context };
/** An event being stored, with the trace its deliveries continue. */
type Traced = { event: EventEnvelope; trace: TraceCarrier | null };

/**
 * Stores a batch with each event in a consumer span of its own under its publisher's, so each
 * event's trace goes on into its deliveries; the spans end once the batch is stored, and its
 * queries are traced under the first event's. Without tracing, just stores.
 */
async function consumeTraced(batch: Consumed[], store: (events: Traced[]) => Promise<void>): Promise<void> {
  const [first] = batch;
  if (!first || !tracingActive()) return store(batch.map(({ event }) => ({ event, trace: null })));
  const spans = batch.map(({ event, trace: parent }) =>
    tracer.startSpan(
      `process ${event.type}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          "messaging.system": "nats",
          "messaging.operation.type": "process",
          "messaging.message.id": event.id,
        },
      },
      parent,
    ),
  );
  const contexts = batch.map(({ trace: parent }, index) => trace.setSpan(parent, spans[index] as Span));
  try {
    await context.with(contexts[0] as Context, () =>
      store(batch.map(({ event }, index) => ({ event, trace: traceCarrierOf(contexts[index] as Context) }))),
    );
  } catch (error) {
    for (const span of spans) recordFailure(span, error);
    throw error;
  } finally {
    for (const span of spans) span.end();
  }
}

/**
 * The events' deliveries, and the events that have any; an event nobody subscribes to is not
 * kept. Two round trips: the endpoints (a plain read, as it was inside a transaction at read
 * committed), then one statement that stores the events and their deliveries together.
 */
async function storeEvents(pool: Pool, batch: Traced[]): Promise<void> {
  const traces = new Map(batch.map((entry) => [entry.event.id, entry.trace]));
  const events = batch.map((entry) => entry.event);
  const endpoints = await subscribedEndpoints(pool, [
    ...new Set(events.map((event) => event.environment_id)),
  ]);
  const deliveries: NewDelivery[] = [];
  const delivered = new Map<string, EventEnvelope>();
  for (const event of events) {
    const emittedAt = Date.parse(event.timestamp);
    for (const endpoint of endpoints) {
      if (endpoint.environment_id !== event.environment_id) continue;
      // An endpoint hears the events emitted since it exists, however late they are consumed.
      if (endpoint.created_at.getTime() > emittedAt) continue;
      if (!endpoint.event_types.includes("*") && !endpoint.event_types.includes(event.type)) continue;
      delivered.set(event.id, event);
      deliveries.push({
        id: newId(),
        environmentId: event.environment_id,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        traceContext: traces.get(event.id) ?? null,
      });
    }
  }
  if (deliveries.length === 0) return;
  await insertEventDeliveries(pool, [...delivered.values()], deliveries);
}
