import { v7 as uuidv7 } from "uuid";
import type { Queryable } from "./db.js";
import { EVENTS_ROOT } from "./nats.js";
import { currentTraceCarrier } from "./trace-context.js";

/** The webhook body of an event (docs/webhooks.md): what the relay publishes and receivers get. */
export type EventEnvelope = {
  id: string;
  type: string;
  timestamp: string;
  environment_id: string;
  data: Record<string, unknown>;
};

/** The Postgres channel a committed outbox row is announced on (payload: the writer's schema). */
export const OUTBOX_CHANNEL = "evalp_outbox";

/** docs/webhooks.md: payloads are at most 256 KiB. An event past it is a bug of its emitter. */
export const MAX_EVENT_BYTES = 256 * 1024;

/** The subject of an event: `events.<environment_id>.<type>` (docs/webhooks.md). */
export function eventSubject(environmentId: string, type: string): string {
  return `${EVENTS_ROOT}.${environmentId}.${type}`;
}

/**
 * Writes one event into the service's outbox, for subject `events.<environment_id>.<type>`. Call
 * it with the client of the transaction that makes the change, so the event exists exactly when
 * the change does.
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
  await writeOutboxMessage(db, {
    id: envelope.id,
    type: envelope.type,
    subject: eventSubject(event.environmentId, event.type),
    environmentId: envelope.environment_id,
    payload: envelope,
    createdAt: envelope.timestamp,
  });
  return envelope;
}

/**
 * Writes any message into the outbox, for any subject whose root a relay routes to a stream.
 * The row's id becomes the message's `Nats-Msg-Id`, the active span's context its trace context. Committing the transaction announces the
 * row on `OUTBOX_CHANNEL`, which wakes the relay at once.
 */
export async function writeOutboxMessage(
  db: Queryable,
  message: {
    id?: string;
    type: string;
    subject: string;
    environmentId?: string | null;
    payload: Record<string, unknown>;
    createdAt?: string;
  },
): Promise<string> {
  const id = message.id ?? uuidv7();
  const body = JSON.stringify(message.payload);
  if (Buffer.byteLength(body) > MAX_EVENT_BYTES) {
    throw new Error(`outbox message ${message.type} is over ${MAX_EVENT_BYTES} bytes`);
  }
  await db.query(
    `WITH written AS (
       INSERT INTO outbox (id, event_type, subject, environment_id, payload, created_at, trace_context)
       VALUES ($1, $2, $3, $4, $5, COALESCE($6::timestamptz, date_trunc('milliseconds', clock_timestamp())), $8)
       RETURNING 1
     )
     SELECT pg_notify($7, current_schema()) FROM written`,
    [
      id,
      message.type,
      message.subject,
      message.environmentId ?? null,
      body,
      message.createdAt ?? null,
      OUTBOX_CHANNEL,
      // The trace of the change, which the relay's publish continues.
      currentTraceCarrier(),
    ],
  );
  return id;
}
