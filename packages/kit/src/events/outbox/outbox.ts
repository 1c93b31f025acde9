import { v7 as uuidv7 } from "uuid";
import type { Queryable } from "../../db/db.js";
import { currentTraceCarrier, type TraceCarrier } from "../../telemetry/trace-context.js";
import { EVENTS_ROOT } from "../nats.js";
import { noteOutboxRow } from "./outbox-handoff.js";

/** The webhook body of an event (docs/webhooks.md): what the relay publishes and receivers get. */
export type EventEnvelope = {
  id: string;
  type: string;
  timestamp: string;
  environment_id: string;
  data: Record<string, unknown>;
};

/** docs/webhooks.md: payloads are at most 256 KiB. An event past it is a bug of its emitter. */
export const MAX_EVENT_BYTES = 256 * 1024;

/** The subject of an event: `events.<environment_id>.<type>` (docs/webhooks.md). */
export function eventSubject(environmentId: string, type: string): string {
  return `${EVENTS_ROOT}.${environmentId}.${type}`;
}

/** A new event's envelope: its id and time, for `environmentId`'s subscribers. */
export function eventEnvelope(event: {
  type: string;
  environmentId: string;
  data: Record<string, unknown>;
}): EventEnvelope {
  return {
    id: uuidv7(),
    type: event.type,
    timestamp: new Date().toISOString(),
    environment_id: event.environmentId,
    data: event.data,
  };
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
  const envelope = eventEnvelope(event);
  await writeOutboxMessage(db, eventMessage(envelope));
  return envelope;
}

/** The outbox message of an event's envelope. */
export function eventMessage(envelope: EventEnvelope): OutboxMessage {
  return {
    id: envelope.id,
    type: envelope.type,
    subject: eventSubject(envelope.environment_id, envelope.type),
    environmentId: envelope.environment_id,
    payload: envelope,
    createdAt: envelope.timestamp,
  };
}

/** A message for the outbox: any subject whose root a relay routes to a stream. */
export type OutboxMessage = {
  id?: string;
  type: string;
  subject: string;
  environmentId?: string | null;
  payload: Record<string, unknown>;
  createdAt?: string;
};

/**
 * The columns an outbox row is written with, and `outboxValues` gives them in this order. A writer
 * that puts the row into a statement of its own (with the change, in one round trip) takes both,
 * and hands the row to its relay with `noteOutboxRow` once the statement wrote it, as
 * `writeOutboxMessage` does.
 */
export const OUTBOX_COLUMNS = "id, event_type, subject, environment_id, payload, created_at, trace_context";

/** An outbox row's values, in the order of OUTBOX_COLUMNS. */
export type OutboxValues = [
  id: string,
  type: string,
  subject: string,
  environmentId: string | null,
  payload: string,
  createdAt: string | null,
  traceContext: TraceCarrier | null,
];

/**
 * The values of a message's outbox row, in the order of OUTBOX_COLUMNS (`created_at` null: now). The
 * row's id becomes the message's `Nats-Msg-Id`, the active span's context its trace context.
 */
export function outboxValues(message: OutboxMessage): OutboxValues {
  const body = JSON.stringify(message.payload);
  if (Buffer.byteLength(body) > MAX_EVENT_BYTES) {
    throw new Error(`outbox message ${message.type} is over ${MAX_EVENT_BYTES} bytes`);
  }
  return [
    message.id ?? uuidv7(),
    message.type,
    message.subject,
    message.environmentId ?? null,
    body,
    message.createdAt ?? null,
    // The trace of the change, which the relay's publish continues.
    currentTraceCarrier(),
  ];
}

/**
 * Writes any message into the outbox. Once the transaction commits, the process's relay
 * publishes it (outbox-handoff.ts); nothing is announced through Postgres, whose NOTIFY would
 * serialize every emitting commit of the database on one lock.
 */
export async function writeOutboxMessage(db: Queryable, message: OutboxMessage): Promise<string> {
  const values = outboxValues(message);
  await db.query(
    `INSERT INTO outbox (${OUTBOX_COLUMNS})
     VALUES ($1, $2, $3, $4, $5, COALESCE($6::timestamptz, date_trunc('milliseconds', clock_timestamp())), $7)`,
    values,
  );
  noteOutboxRow(db, values);
  return values[0];
}
