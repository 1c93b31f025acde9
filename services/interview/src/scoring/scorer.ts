import { ConnectError } from "@connectrpc/connect";
import { createWakeLoop, type Queryable, type WakeLoop, withTransaction } from "@evalp/kit";
import { findEvaluation } from "../db/evaluations.js";
import { requireInterview } from "../db/interviews.js";
import { claimScoringJob, deleteScoringJob, END_TRIGGER, postponeScoringJob } from "../db/results.js";
import type { Deps } from "../deps.js";
import { scoreAgainst, scoringInputs, storeResult, workerCall } from "./score.js";

/** How often a replica looks for interviews that ended and wait to be scored. */
export const SCORE_EVERY_MS = 250;
/** A job whose planes did not answer is tried again after this, doubling up to `MAX_RETRY_MS`. */
const FIRST_RETRY_MS = 1_000;
const MAX_RETRY_MS = 5 * 60_000;

/**
 * Scores one due job, if any: the job row is held (FOR UPDATE SKIP LOCKED) for the whole
 * transaction, which stores the result and its event and deletes the job, so that the replicas
 * share the jobs and a replica that dies mid-way gives its job back with its connection. A job
 * that fails (a plane unreachable or timed out, anything else) is postponed with a backoff, so
 * that it never blocks the others.
 */
export async function scoreNext(deps: Deps): Promise<boolean> {
  let claimed: { evaluation_id: string; attempts: number } | undefined;
  try {
    return await withTransaction(deps.pool, async (tx) => {
      const job = await claimScoringJob(tx);
      if (!job) return false;
      claimed = job;
      const evaluation = await findEvaluation(tx, job.environment_id, job.evaluation_id);
      const interview = await requireInterview(tx, evaluation.id);
      if (interview.status !== "completed" && interview.status !== "ended_incomplete") {
        await deleteScoringJob(tx, job.evaluation_id);
        return true;
      }
      const call = workerCall(evaluation.id);
      try {
        const inputs = await scoringInputs(deps, tx, evaluation, interview, call);
        const scored = await scoreAgainst(deps, evaluation, evaluation.bundle_id, inputs, call);
        await storeResult(tx, evaluation, {
          ...scored,
          trigger: END_TRIGGER,
          outcome: interview.status,
          inputs,
        });
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        await postpone(deps, tx, job, error);
        return true;
      }
      await deleteScoringJob(tx, job.evaluation_id);
      return true;
    });
  } catch (error) {
    // Anything else that failed a claimed job (its transaction is gone) postpones it too, so that
    // one job that keeps failing never holds up the others.
    if (claimed) await postpone(deps, deps.pool, claimed, error);
    throw error;
  }
}

async function postpone(
  deps: Deps,
  db: Queryable,
  job: { evaluation_id: string; attempts: number },
  error: unknown,
): Promise<void> {
  const delay = Math.min(FIRST_RETRY_MS * 2 ** job.attempts, MAX_RETRY_MS);
  deps.logger.warn({ err: error, evaluation_id: job.evaluation_id, retry_in_ms: delay }, "scoring postponed");
  await postponeScoringJob(
    db,
    job.evaluation_id,
    delay,
    error instanceof Error ? error.message : String(error),
  );
}

/** The loop of every interview replica that scores the evaluations whose interviews ended. */
export function createScorer(deps: Deps): WakeLoop {
  return createWakeLoop({
    logger: deps.logger,
    failure: "scoring failed",
    intervalMs: SCORE_EVERY_MS,
    // One job a pass; a pass that found one goes on at once.
    pass: async () => ((await scoreNext(deps)) ? 0 : undefined),
  });
}
