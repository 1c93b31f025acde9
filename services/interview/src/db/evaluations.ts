import { isUuid, newId, notFound, pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
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

/** Counted rows of `active_participant_sessions`: unexpired, not completed, not revoked (docs/interview.md). */
export async function countActiveSessions(db: Queryable, environmentId: string): Promise<number> {
  const found = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM participant_sessions
     WHERE environment_id = $1 AND completed_at IS NULL AND revoked_at IS NULL
       AND expires_at > clock_timestamp()`,
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

/** Inserts an evaluation, `pending` until its participant starts. */
export async function insertEvaluation(
  db: Queryable,
  evaluation: {
    organizationId: string;
    appId: string;
    environmentId: string;
    subjectId: string;
    bundleId: string;
    programId: string | null;
  },
): Promise<EvaluationRow> {
  const inserted = await db.query<EvaluationRow>(
    `INSERT INTO evaluations (id, organization_id, app_id, environment_id, subject_id, bundle_id, program_id)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     RETURNING id, organization_id, app_id, environment_id, subject_id, bundle_id, program_id, created_at,
               'pending' AS status`,
    [
      newId(),
      evaluation.organizationId,
      evaluation.appId,
      evaluation.environmentId,
      evaluation.subjectId,
      evaluation.bundleId,
      evaluation.programId,
    ],
  );
  return inserted.rows[0] as EvaluationRow;
}

/** A participant session of an evaluation, valid until `expiresAt`. */
export async function insertParticipantSession(
  db: Queryable,
  session: { id: string; evaluationId: string; environmentId: string; expiresAt: Date },
): Promise<void> {
  await db.query(
    "INSERT INTO participant_sessions (id, evaluation_id, environment_id, expires_at) VALUES ($1, $2, $3, $4)",
    [session.id, session.evaluationId, session.environmentId, session.expiresAt],
  );
}

/** A participant session with its evaluation, whether it has expired, and why it was revoked. */
export type ParticipantSessionRow = EvaluationRow & {
  session_id: string;
  expires_at: Date;
  completed_at: Date | null;
  expired: boolean;
  revoked_reason: "revoked" | "superseded" | null;
};

/** A participant session by id, with its evaluation (and that evaluation's interview status). */
export async function findParticipantSession(
  db: Queryable,
  sessionId: string,
): Promise<ParticipantSessionRow | undefined> {
  const found = await db.query<ParticipantSessionRow>(
    `SELECT ${EVALUATION_COLUMNS}, s.id AS session_id, s.expires_at, s.completed_at,
            s.expires_at <= clock_timestamp() AS expired, s.revoked_reason
     FROM participant_sessions s JOIN evaluations e ON e.id = s.evaluation_id
     LEFT JOIN interviews i ON i.evaluation_id = e.id
     WHERE s.id = $1`,
    [sessionId],
  );
  return found.rows[0];
}

/** The filters of the evaluations' list (docs/results.md#listing-evaluations); each optional. */
export type EvaluationFilters = {
  status?: string | undefined;
  subjectId?: string | undefined;
  bundleId?: string | undefined;
  programId?: string | undefined;
  createdAfter?: Date | undefined;
  createdBefore?: Date | undefined;
};

/** A page of the environment's evaluations, newest first, with when each was last scored. */
export async function listEvaluationRows(
  db: Queryable,
  environmentId: string,
  filters: EvaluationFilters,
  page: PageRequest | undefined,
): Promise<Array<EvaluationRow & { scored_at: Date | null }>> {
  const params: unknown[] = [environmentId];
  const where: string[] = [];
  const add = (column: string, op: string, value: unknown) => {
    if (value === undefined) return;
    params.push(value);
    where.push(`${column} ${op} $${params.length}`);
  };
  add("status", "=", filters.status);
  add("subject_id", "=", filters.subjectId);
  add("bundle_id", "=", filters.bundleId);
  add("program_id", "=", filters.programId);
  add("created_at", ">", filters.createdAfter);
  add("created_at", "<", filters.createdBefore);
  const clause = pageClause(page, params.length + 1);
  // The status is the interview's: the page is cut from the evaluations joined to it.
  const found = await db.query<EvaluationRow & { scored_at: Date | null }>(
    `SELECT * FROM (
       SELECT ${EVALUATION_COLUMNS}, e.scored_at FROM evaluations e
       LEFT JOIN interviews i ON i.evaluation_id = e.id WHERE e.environment_id = $1
     ) AS evaluation
     WHERE ${[...where, clause.where].join(" AND ")} ${clause.tail}`,
    [...params, ...clause.params],
  );
  return found.rows;
}

/**
 * Holds the evaluation's row for the transaction, so that of two sessions created at once one
 * supersedes the other (each sees the other's row once it holds the lock).
 */
export async function lockEvaluation(db: Queryable, evaluationId: string): Promise<void> {
  await db.query("SELECT id FROM evaluations WHERE id = $1 FOR UPDATE", [evaluationId]);
}

/** Revokes the evaluation's sessions not yet revoked, as superseded by a newer one; their ids. */
export async function supersedeParticipantSessions(db: Queryable, evaluationId: string): Promise<string[]> {
  const revoked = await db.query<{ id: string }>(
    `UPDATE participant_sessions SET revoked_at = clock_timestamp(), revoked_reason = 'superseded'
     WHERE evaluation_id = $1 AND revoked_at IS NULL RETURNING id`,
    [evaluationId],
  );
  return revoked.rows.map((row) => row.id);
}

/**
 * Revokes one session of the evaluation: `revoked` when this call revoked it, `already` when it
 * was revoked before (DELETE is idempotent), undefined when the evaluation has no such session.
 */
export async function revokeParticipantSession(
  db: Queryable,
  evaluationId: string,
  sessionId: string,
): Promise<"revoked" | "already" | undefined> {
  if (!isUuid(sessionId)) return undefined;
  const found = await db.query<{ revoked: boolean }>(
    `WITH target AS (
       SELECT id, revoked_at FROM participant_sessions WHERE id = $2 AND evaluation_id = $1 FOR UPDATE
     ), updated AS (
       UPDATE participant_sessions s SET revoked_at = clock_timestamp(), revoked_reason = 'revoked'
       FROM target WHERE s.id = target.id AND target.revoked_at IS NULL RETURNING s.id
     )
     SELECT EXISTS (SELECT 1 FROM updated) AS revoked FROM target`,
    [evaluationId, sessionId],
  );
  const row = found.rows[0];
  if (!row) return undefined;
  return row.revoked ? "revoked" : "already";
}
