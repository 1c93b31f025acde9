import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId, type Queryable } from "@evalp/kit";
import { type EvaluationResult, EvaluationResultSchema } from "@evalp/proto/interview/v1/evaluation";

/** The answers, context and signals a result was scored on (docs/results.md). */
export type ScoringInputs = {
  answers: Record<string, unknown>;
  context: Record<string, unknown>;
  signals: Record<string, number>;
};

/** A stored result: immutable once written. */
export type ResultRow = {
  id: string;
  evaluation_id: string;
  environment_id: string;
  trigger: string;
  subject_id: string;
  bundle_id: string;
  fingerprint: string;
  outcome: "completed" | "ended_incomplete";
  inputs: ScoringInputs;
  report: Record<string, unknown>;
  trace: Record<string, unknown>;
  scored_at: Date;
};

/** The trigger of the scoring when the interview ended; a rescore's is `rescore:<id>`. */
export const END_TRIGGER = "end";

const RESULT_COLUMNS = `id, evaluation_id, environment_id, trigger, subject_id, bundle_id, fingerprint, outcome,
  inputs, report, trace, scored_at`;

/** Leaves the ended interview's evaluation to be scored, in the transaction that ends it. */
export async function insertScoringJob(tx: Queryable, evaluationId: string, environmentId: string) {
  await tx.query(
    "INSERT INTO scoring_jobs (evaluation_id, environment_id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
    [evaluationId, environmentId],
  );
}

/** A scoring job that is due: held (FOR UPDATE) by `tx` until it commits, skipped by the others. */
export async function claimScoringJob(
  tx: Queryable,
): Promise<{ evaluation_id: string; environment_id: string; attempts: number } | undefined> {
  const found = await tx.query<{ evaluation_id: string; environment_id: string; attempts: number }>(
    `SELECT evaluation_id, environment_id, attempts FROM scoring_jobs
     WHERE not_before <= clock_timestamp() ORDER BY not_before LIMIT 1 FOR UPDATE SKIP LOCKED`,
  );
  return found.rows[0];
}

/** A job that failed for a reason that may pass (a plane unreachable): tried again after `delayMs`. */
export async function postponeScoringJob(
  tx: Queryable,
  evaluationId: string,
  delayMs: number,
  error: string,
) {
  await tx.query(
    `UPDATE scoring_jobs SET attempts = attempts + 1, last_error = $3,
       not_before = clock_timestamp() + make_interval(secs => $2::double precision / 1000)
     WHERE evaluation_id = $1`,
    [evaluationId, delayMs, error.slice(0, 500)],
  );
}

export async function deleteScoringJob(tx: Queryable, evaluationId: string) {
  await tx.query("DELETE FROM scoring_jobs WHERE evaluation_id = $1", [evaluationId]);
}

/**
 * Stores a result unless one of this (evaluation, trigger) is stored already (then undefined),
 * and stamps the evaluation's `scored_at` with it (its latest result's).
 */
export async function insertResult(
  tx: Queryable,
  result: Omit<ResultRow, "id" | "scored_at">,
): Promise<ResultRow | undefined> {
  const inserted = await tx.query<ResultRow>(
    `INSERT INTO evaluation_results (id, evaluation_id, environment_id, trigger, subject_id, bundle_id,
       fingerprint, outcome, inputs, report, trace)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     ON CONFLICT (evaluation_id, trigger) DO NOTHING
     RETURNING ${RESULT_COLUMNS}`,
    [
      newId(),
      result.evaluation_id,
      result.environment_id,
      result.trigger,
      result.subject_id,
      result.bundle_id,
      result.fingerprint,
      result.outcome,
      result.inputs,
      result.report,
      result.trace,
    ],
  );
  const row = inserted.rows[0];
  if (row) {
    // Two rescores may commit out of order: the evaluation keeps the later of the two.
    await tx.query("UPDATE evaluations SET scored_at = GREATEST(scored_at, $2) WHERE id = $1", [
      row.evaluation_id,
      row.scored_at,
    ]);
  }
  return row;
}

/** The evaluation's results, oldest first (ids are time ordered, so they break ties in order). */
export async function listResults(db: Queryable, evaluationId: string): Promise<ResultRow[]> {
  const found = await db.query<ResultRow>(
    `SELECT ${RESULT_COLUMNS} FROM evaluation_results WHERE evaluation_id = $1 ORDER BY scored_at, id`,
    [evaluationId],
  );
  return found.rows;
}

/** The evaluation's latest result, if it was scored. */
export async function latestResult(db: Queryable, evaluationId: string): Promise<ResultRow | undefined> {
  const found = await db.query<ResultRow>(
    `SELECT ${RESULT_COLUMNS} FROM evaluation_results WHERE evaluation_id = $1
     ORDER BY scored_at DESC, id DESC LIMIT 1`,
    [evaluationId],
  );
  return found.rows[0];
}

/** The result stored when the evaluation's interview ended (what a rescore scores again). */
export async function endResult(db: Queryable, evaluationId: string): Promise<ResultRow | undefined> {
  const found = await db.query<ResultRow>(
    `SELECT ${RESULT_COLUMNS} FROM evaluation_results WHERE evaluation_id = $1 AND trigger = $2`,
    [evaluationId, END_TRIGGER],
  );
  return found.rows[0];
}

export function resultMessage(row: ResultRow): EvaluationResult {
  return create(EvaluationResultSchema, {
    id: row.id,
    evaluationId: row.evaluation_id,
    subjectId: row.subject_id,
    bundleId: row.bundle_id,
    fingerprint: row.fingerprint,
    outcome: row.outcome,
    scoredAt: timestampFromDate(row.scored_at),
    report: row.report as JsonObject,
    trace: row.trace as JsonObject,
  });
}
