import type { Queryable } from "@evalp/kit";

/**
 * The fields of an event's `data` that hold personal data, by event type (docs/subjects.md).
 * Every other field of every event is an id, a count, a status or a time.
 */
export const PERSONAL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  "continuous_answer.recorded": ["answer"],
};

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
  await db.query(
    `UPDATE webhook_deliveries d
     SET status = 'dead_letter', last_error = 'subject erased', next_attempt_at = NULL, leased_until = NULL,
         claim_token = NULL, updated_at = date_trunc('milliseconds', clock_timestamp())
     FROM webhook_events ev
     WHERE ev.id = d.event_id AND ev.environment_id = $1 AND ev.subject_id = $2 AND ev.event_type = ANY($3)
       AND d.status IN ('pending', 'failed')`,
    [environmentId, subjectId, types],
  );
  const stored = await db.query<{ id: string; event_type: string; body: string }>(
    `SELECT id, event_type, body FROM webhook_events
     WHERE environment_id = $1 AND subject_id = $2 AND event_type = ANY($3) FOR UPDATE`,
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

/** A delivery of an event about the subject, as exported: ids, type, times and status, no payload. */
export type SubjectDeliveryRow = {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempt_count: number;
  last_error: string | null;
  response_status: number | null;
  delivered_at: Date | null;
  created_at: Date;
  event_created_at: Date;
};

/** The deliveries of the events about a subject, oldest first, `limit` after `after` (created_at, id). */
export async function subjectDeliveries(
  db: Queryable,
  environmentId: string,
  subjectId: string,
  after: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<SubjectDeliveryRow[]> {
  const found = await db.query<SubjectDeliveryRow>(
    `SELECT d.id, d.endpoint_id, d.event_id, d.event_type, d.status, d.attempt_count, d.last_error, d.response_status,
            d.delivered_at, d.created_at, ev.created_at AS event_created_at
     FROM webhook_events ev JOIN webhook_deliveries d ON d.event_id = ev.id
     WHERE ev.environment_id = $1 AND ev.subject_id = $2
       AND ($3::timestamptz IS NULL OR (d.created_at, d.id) > ($3, $4::uuid))
     ORDER BY d.created_at, d.id LIMIT $5`,
    [environmentId, subjectId, after?.createdAt ?? null, after?.id ?? null, limit],
  );
  return found.rows;
}
