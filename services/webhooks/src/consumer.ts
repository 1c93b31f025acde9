import {
  createDurableConsumer,
  type DurableConsumer,
  EVENTS_CONSUMER,
  type EventEnvelope,
  type Logger,
  type NatsConnection,
  newId,
  type Pool,
  type Registry,
  type StreamRoute,
  withTransaction,
} from "@evalp/kit";
import { insertDeliveries, type NewDelivery } from "./db/deliveries.js";
import { subscribedEndpoints } from "./db/endpoints.js";
import { insertEvents } from "./db/events.js";
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
  return createDurableConsumer<EventEnvelope>({
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
      return isEnvelope(event) ? event : null;
    },
    async handle(batch) {
      const events = new Map(batch.map((event) => [event.id, event]));
      await storeEvents(options.pool, [...events.values()]);
      options.onStored();
      return undefined;
    },
  });
}

/** The events' deliveries, and the events that have any; an event nobody subscribes to is not kept. */
async function storeEvents(pool: Pool, events: EventEnvelope[]): Promise<void> {
  await withTransaction(pool, async (tx) => {
    const endpoints = await subscribedEndpoints(tx, [
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
        });
      }
    }
    if (deliveries.length === 0) return;
    await insertEvents(tx, [...delivered.values()]);
    await insertDeliveries(tx, deliveries);
  });
}
