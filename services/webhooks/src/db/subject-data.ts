import type { ExportSection, Queryable } from "@evalp/kit";
import { DELIVERY_COLUMNS, type DeliveryRow, writeDeadLetter } from "./deliveries.js";

/**
 * The fields of an event's `data` that hold personal data, by event type (docs/subjects.md).
 * Every other field of every event is an id, a count, a status or a time.
 */
export const PERSONAL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "continuous_answer.recorded": ["answer"],
};

/**
 * Whether the event `ev` is about the subject `$2`: its `subject_id`, or for an event stored
 * before that column existed (never backfilled: retention removes such rows within
 * RETENTION_WEBHOOK_DELIVERIES_DAYS), its body's `data.subject_id`.
 */
const ABOUT_SUBJECT = `(ev.subject_id = $2 OR (ev.subject_id IS NULL AND ev.body::jsonb -> 'data' ->> 'subject_id' = $2::text))`;

/**
 * The webhooks plane's part of a subject's erasure, in the caller's transaction: deliveries not
 * yet made of the events about the subject that hold personal data are stopped (`dead_letter`,
 * `last_error` `subject erased`), and the stored bodies of those events keep their envelope with
 * the personal fields set to null (a replay sends that). Events with ids only (`interview.*`,
 * `subject.*`) are left to be delivered.
 */
export async function eraseSubjectEvents(
  db: Queryable,
  environmentId: string,
  subjectId: string,
): Promise<void> {
  const types = Object.keys(PERSONAL_FIELDS);
  // Their locks in id order, as every path that dead-letters takes them; each one is announced.
  const stopped = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries d
     SET status = 'dead_letter', last_error = 'subject erased', next_attempt_at = NULL, leased_until = NULL,
         claim_token = NULL, updated_at = clock_timestamp()
     FROM (SELECT w.id FROM webhook_deliveries w JOIN webhook_events ev ON ev.id = w.event_id
           WHERE ev.environment_id = $1 AND ${ABOUT_SUBJECT} AND ev.event_type = ANY($3)
             AND w.status IN ('pending', 'failed')
           ORDER BY w.id FOR UPDATE OF w) waiting
     WHERE d.id = waiting.id
     RETURNING ${DELIVERY_COLUMNS.replace(/(\w+)/g, "d.$1")}`,
    [environmentId, subjectId, types],
  );
  for (const row of stopped.rows) await writeDeadLetter(db, row);
  const stored = await db.query<{ id: string; event_type: string; body: string }>(
    `SELECT ev.id, ev.event_type, ev.body FROM webhook_events ev
     WHERE ev.environment_id = $1 AND ${ABOUT_SUBJECT} AND ev.event_type = ANY($3) FOR UPDATE`,
    [environmentId, subjectId, types],
  );
  const stripped = stored.rows.map((row) => ({
    id: row.id,
    body: stripBody(row.body, PERSONAL_FIELDS[row.event_type] ?? []),
  }));
  await db.query(
    `UPDATE webhook_events ev SET body = s.body FROM unnest($1::uuid[], $2::text[]) AS s (id, body) WHERE ev.id = s.id`,
    [stripped.map((row) => row.id), stripped.map((row) => row.body)],
  );
}

/** An event body with `fields` of its `data` set to null, its fields in their order. */
export function stripBody(body: string, fields: readonly string[]): string {
  const event = JSON.parse(body) as { data?: Record<string, unknown> };
  if (event.data) for (const field of fields) if (field in event.data) event.data[field] = null;
  return JSON.stringify(event);
}

/**
 * The webhooks plane's sections of a subject export: the deliveries of the events about the
 * subject (ids, type, times, status; no payload), oldest first.
 */
export function deliveryExportSections(environmentId: string, subjectId: string): ExportSection[] {
  return [
    {
      name: "webhook_deliveries",
      sql: `SELECT jsonb_build_object('id', d.id, 'endpoint_id', d.endpoint_id, 'event_id', d.event_id,
              'event_type', d.event_type, 'event_created_at', ev.created_at, 'status', d.status,
              'attempt_count', d.attempt_count, 'last_error', d.last_error, 'response_status', d.response_status,
              'delivered_at', d.delivered_at, 'created_at', d.created_at) AS row
            FROM webhook_events ev JOIN webhook_deliveries d ON d.event_id = ev.id
            WHERE ev.environment_id = $1 AND ${ABOUT_SUBJECT} ORDER BY d.created_at, d.id`,
      params: [environmentId, subjectId],
    },
  ];
}
