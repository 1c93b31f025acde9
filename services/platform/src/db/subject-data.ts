import { type ExportSection, lockSubjectData, type Queryable, recordErasedSubject } from "@evalp/kit";

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
  // An answer being recorded either committed before this (and is erased below) or waits and is refused.
  await lockSubjectData(db, subjectId);
  await recordErasedSubject(db, environmentId, subjectId);
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

/** The platform plane's sections of a subject export: its continuous answers, oldest first. */
export function answerExportSections(environmentId: string, subjectId: string): ExportSection[] {
  return [
    {
      name: "continuous_answers",
      sql: `SELECT to_jsonb(a) - 'environment_id' - 'subject_id' AS row FROM continuous_answers a
            WHERE a.environment_id = $1 AND a.subject_id = $2 ORDER BY a.created_at, a.id`,
      params: [environmentId, subjectId],
    },
  ];
}
