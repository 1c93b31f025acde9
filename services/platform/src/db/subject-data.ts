import type { Queryable } from "@evalp/kit";

/**
 * The platform plane's part of a subject's erasure (docs/subjects.md#erasure), in the caller's
 * transaction: the subject's continuous answers, and the outbox rows of their
 * `continuous_answer.recorded` events (which repeat the answer); a row not yet published is
 * never published.
 */
export async function eraseSubjectAnswers(
  db: Queryable,
  environmentId: string,
  subjectId: string,
): Promise<void> {
  await db.query("DELETE FROM continuous_answers WHERE environment_id = $1 AND subject_id = $2", [
    environmentId,
    subjectId,
  ]);
  await db.query(
    `DELETE FROM outbox WHERE environment_id = $1 AND event_type = 'continuous_answer.recorded'
       AND payload -> 'data' ->> 'subject_id' = $2`,
    [environmentId, subjectId],
  );
}

/** A subject's continuous answers as exported, oldest first, `limit` after `after` (created_at, id). */
export type AnswerExportRow = {
  id: string;
  program_id: string;
  question_id: string;
  client_answer_id: string;
  answer: unknown;
  answered_at: Date | null;
  delivery_id: string | null;
  created_at: Date;
};

export async function subjectAnswers(
  db: Queryable,
  environmentId: string,
  subjectId: string,
  after: { createdAt: Date; id: string } | null,
  limit: number,
): Promise<AnswerExportRow[]> {
  const found = await db.query<AnswerExportRow>(
    `SELECT id, program_id, question_id, client_answer_id, answer, answered_at, delivery_id, created_at
     FROM continuous_answers
     WHERE environment_id = $1 AND subject_id = $2 AND ($3::timestamptz IS NULL OR (created_at, id) > ($3, $4::uuid))
     ORDER BY created_at, id LIMIT $5`,
    [environmentId, subjectId, after?.createdAt ?? null, after?.id ?? null, limit],
  );
  return found.rows;
}
