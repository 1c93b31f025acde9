import { v7 as uuidv7 } from "uuid";
import type { Queryable } from "./db.js";

/** The webhook body of an event (contract §6): what the relay publishes and receivers get. */
export type EventEnvelope = {
  id: string;
  type: string;
  timestamp: string;
  environment_id: string;
  data: Record<string, unknown>;
};

/**
 * Writes one event into the service's outbox. Call it with the client of the transaction that
 * makes the change, so the event exists exactly when the change does.
 */
export async function writeOutboxEvent(
  db: Queryable,
  event: { type: string; environmentId: string; data: Record<string, unknown> },
): Promise<EventEnvelope> {
  const envelope: EventEnvelope = {
    id: uuidv7(),
    type: event.type,
    timestamp: new Date().toISOString(),
    environment_id: event.environmentId,
    data: event.data,
  };
  await db.query(
    "INSERT INTO outbox (id, event_type, environment_id, payload, created_at) VALUES ($1, $2, $3, $4, $5)",
    [envelope.id, envelope.type, envelope.environment_id, envelope, envelope.timestamp],
  );
  return envelope;
}
