import { newId, pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";

/** A behavioral event as staff read it. */
export type EventRow = {
  id: string;
  type: string;
  occurred_at: Date;
  question_id: string | null;
  elapsed_ms: number | null;
  created_at: Date;
};

/** One event of a batch, as the participant's client sent it. */
export type NewEvent = {
  type: string;
  occurredAt: Date;
  questionId: string | null;
  elapsedMs: number | null;
};

/** Stores a batch (its size counts against the batch quota) and its events. */
export async function insertEventBatch(
  db: Queryable,
  batch: { environmentId: string; evaluationId: string; sessionId: string; events: NewEvent[] },
): Promise<void> {
  const batchId = newId();
  await db.query(
    `INSERT INTO behavioral_event_batches (id, environment_id, evaluation_id, session_id, size)
     VALUES ($1, $2, $3, $4, $5)`,
    [batchId, batch.environmentId, batch.evaluationId, batch.sessionId, batch.events.length],
  );
  const columns = ["id", "batch_id", "evaluation_id", "type", "occurred_at", "question_id", "elapsed_ms"];
  const values: unknown[] = [];
  const rows = batch.events.map((event, i) => {
    values.push(
      newId(),
      batchId,
      batch.evaluationId,
      event.type,
      event.occurredAt,
      event.questionId,
      event.elapsedMs,
    );
    return `(${columns.map((_, k) => `$${i * columns.length + k + 1}`).join(", ")})`;
  });
  await db.query(`INSERT INTO behavioral_events (${columns.join(", ")}) VALUES ${rows.join(", ")}`, values);
}

/** A page of an evaluation's behavioral events, newest first. */
export async function listEventRows(
  db: Queryable,
  evaluationId: string,
  page: PageRequest | undefined,
): Promise<EventRow[]> {
  const clause = pageClause(page, 2);
  const found = await db.query<EventRow>(
    `SELECT id, type, occurred_at, question_id, elapsed_ms, created_at FROM behavioral_events
     WHERE evaluation_id = $1 AND ${clause.where} ${clause.tail}`,
    [evaluationId, ...clause.params],
  );
  return found.rows;
}
