import { newId, notFound, type Queryable } from "@evalp/kit";
import { INTERVIEW_COLUMNS, type InterviewRow } from "./rows.js";

/** The interview of an evaluation, if it started; `forUpdate` takes the row for one step. */
export async function findInterview(
  db: Queryable,
  evaluationId: string,
  forUpdate = false,
): Promise<InterviewRow | null> {
  const found = await db.query<InterviewRow>(
    `SELECT ${INTERVIEW_COLUMNS} FROM interviews WHERE evaluation_id = $1${forUpdate ? " FOR UPDATE" : ""}`,
    [evaluationId],
  );
  return found.rows[0] ?? null;
}

/** Like `findInterview`, 404 `not_found` (resource `interview`) before the participant started. */
export async function requireInterview(
  db: Queryable,
  evaluationId: string,
  forUpdate = false,
): Promise<InterviewRow> {
  const row = await findInterview(db, evaluationId, forUpdate);
  if (!row) throw notFound("interview");
  return row;
}

/** Writes back what a step changes; the caller holds the row (FOR UPDATE) in `tx`. */
export async function saveInterview(tx: Queryable, row: InterviewRow, now: Date): Promise<void> {
  await tx.query(
    `UPDATE interviews SET status = $2, consented_at = $3, answers = $4, current_question_id = $5, revision = $6,
       last_seq = $7, last_activity_at = $8, completed_at = $9, ended_reason = $10, paused_reason = $11,
       agent = $12
     WHERE id = $1`,
    [
      row.id,
      row.status,
      row.consented_at,
      JSON.stringify(row.answers),
      row.current_question_id,
      row.revision,
      row.last_seq,
      now,
      row.completed_at,
      row.ended_reason,
      row.paused_reason,
      JSON.stringify(row.agent ?? {}),
    ],
  );
  row.last_activity_at = now;
}

/** Ends every participant session of the evaluation: they stop counting as active. */
export async function completeSessions(tx: Queryable, evaluationId: string, now: Date): Promise<void> {
  await tx.query(
    "UPDATE participant_sessions SET completed_at = $2 WHERE evaluation_id = $1 AND completed_at IS NULL",
    [evaluationId, now],
  );
}

/** The evaluation an interview is of, if the interview exists. */
export async function evaluationOfInterview(db: Queryable, interviewId: string): Promise<string | undefined> {
  const found = await db.query<{ evaluation_id: string }>(
    "SELECT evaluation_id FROM interviews WHERE id = $1",
    [interviewId],
  );
  return found.rows[0]?.evaluation_id;
}

/** Schedules the pause of an interview whose agent left, `afterMs` from now. */
export async function scheduleAgentPause(db: Queryable, interviewId: string, afterMs: number): Promise<void> {
  await db.query(
    "UPDATE interviews SET agent_pause_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE id = $1",
    [interviewId, afterMs],
  );
}

/** Calls off a scheduled agent pause (an agent came back, or the pause is being handled). */
export async function clearAgentPause(db: Queryable, interviewId: string): Promise<void> {
  await db.query("UPDATE interviews SET agent_pause_at = NULL WHERE id = $1", [interviewId]);
}

/** Locks up to `limit` interviews whose agent pause is due, skipping those another sweeper holds; their evaluations. */
export async function lockDueAgentPauses(db: Queryable, limit: number): Promise<string[]> {
  const due = await db.query<{ evaluation_id: string }>(
    `SELECT evaluation_id FROM interviews WHERE agent_pause_at <= clock_timestamp()
     ORDER BY agent_pause_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [limit],
  );
  return due.rows.map((row) => row.evaluation_id);
}

/** Inserts an evaluation's interview (operator status `active`); undefined when a concurrent first start did. */
export async function insertInterview(
  db: Queryable,
  interview: {
    evaluationId: string;
    environmentId: string;
    bundleId: string;
    fingerprint: string;
    components: unknown;
  },
): Promise<InterviewRow | undefined> {
  const inserted = await db.query<InterviewRow>(
    `INSERT INTO interviews (id, evaluation_id, environment_id, bundle_id, config_fingerprint, components, status)
     VALUES ($1, $2, $3, $4, $5, $6, 'active')
     ON CONFLICT (evaluation_id) DO NOTHING RETURNING ${INTERVIEW_COLUMNS}`,
    [
      newId(),
      interview.evaluationId,
      interview.environmentId,
      interview.bundleId,
      interview.fingerprint,
      interview.components,
    ],
  );
  return inserted.rows[0];
}
