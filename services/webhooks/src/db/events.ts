import type { EventEnvelope, Queryable } from "@evalp/kit";
import { eventBody } from "../event-body.js";
import { KEEP_STORED_EVENT, subjectOf } from "./deliveries.js";

/** Stores events with the body receivers get; one already stored (a redelivery) is kept as it was. */
export async function insertEvents(db: Queryable, events: EventEnvelope[]): Promise<void> {
  await db.query(
    `INSERT INTO webhook_events (id, environment_id, event_type, body, created_at, subject_id)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $6::uuid[])
     ${KEEP_STORED_EVENT}`,
    [
      events.map((event) => event.id),
      events.map((event) => event.environment_id),
      events.map((event) => event.type),
      events.map(eventBody),
      events.map((event) => event.timestamp),
      events.map(subjectOf),
    ],
  );
}
