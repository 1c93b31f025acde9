import { isUuid, notFound, type Queryable } from "@evalp/kit";
import { EVALUATION_COLUMNS, type EvaluationRow } from "./rows.js";

/** An evaluation of the environment, or 404 (also for one of another environment). */
export async function findEvaluation(
  db: Queryable,
  environmentId: string,
  evaluationId: string,
): Promise<EvaluationRow> {
  if (!isUuid(evaluationId)) throw notFound("evaluation");
  const found = await db.query<EvaluationRow>(
    `SELECT ${EVALUATION_COLUMNS} FROM evaluations e LEFT JOIN interviews i ON i.evaluation_id = e.id
     WHERE e.id = $1 AND e.environment_id = $2`,
    [evaluationId, environmentId],
  );
  const row = found.rows[0];
  if (!row) throw notFound("evaluation");
  return row;
}

/** Counted rows of the `evaluations` quota. */
export async function countEvaluations(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ n: number }>(
    "SELECT count(*) AS n FROM evaluations WHERE environment_id = $1",
    [environmentId],
  );
  return found.rows[0]?.n ?? 0;
}

/** Counted rows of `active_participant_sessions`: unexpired and not completed (contract §5b). */
export async function countActiveSessions(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM participant_sessions
     WHERE environment_id = $1 AND completed_at IS NULL AND expires_at > clock_timestamp()`,
    [environmentId],
  );
  return found.rows[0]?.n ?? 0;
}

/** The usage of `behavioral_event_batch_size`: the largest batch accepted so far. */
export async function largestEventBatch(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ n: number | null }>(
    "SELECT max(size) AS n FROM behavioral_event_batches WHERE environment_id = $1",
    [environmentId],
  );
  return found.rows[0]?.n ?? 0;
}
