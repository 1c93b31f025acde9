import { type PoolClient, withTransaction, writeOutboxEvent } from "@evalp/kit";
import type { ParticipantRef } from "@evalp/proto/interview/v1/participant";
import { completeSessions, requireInterview } from "./db/interviews.js";
import { insertScoringJob } from "./db/results.js";
import type { EvaluationRow, InterviewRow } from "./db/rows.js";
import type { Deps } from "./deps.js";
import { type Flow, flowOf } from "./flow/flow.js";
import { snapshotOf } from "./flow/snapshot.js";
import { requireSession, type SessionContext } from "./participant-scope.js";

/** What one participant step works with, inside its transaction. */
export type Step = {
  tx: PoolClient;
  interview: InterviewRow;
  flow: Flow;
  session: SessionContext;
  /** One clock reading per step: every entry it writes was received at this instant. */
  now: Date;
};

/**
 * Runs one participant step: the session is checked, then the interview row is taken FOR
 * UPDATE for the whole transaction, so steps of one interview run one after the other and
 * number their entries without gaps (404 before the participant has started).
 */
export async function runStep<T>(
  deps: Deps,
  ref: ParticipantRef | undefined,
  work: (step: Step) => Promise<T>,
): Promise<T> {
  const session = await requireSession(deps.pool, ref);
  return withTransaction(deps.pool, async (tx) => {
    const interview = await requireInterview(tx, session.evaluation.id, true);
    const flow = flowOf(interview.config_fingerprint, interview.components);
    return work({ tx, interview, flow, session, now: new Date() });
  });
}

/** The participant's view of an interview row. */
export function snapshotOfRow(interview: InterviewRow) {
  return snapshotOf(flowOf(interview.config_fingerprint, interview.components), {
    id: interview.id,
    status: interview.status,
    consented: interview.consented_at !== null,
    answers: interview.answers,
    revision: interview.revision,
    pausedReason: interview.paused_reason,
    agent: interview.agent,
  });
}

/**
 * The interview is over (finished, or ended by the guardrail): its sessions stop counting as
 * active, `interview.completed` goes out through the outbox with the final status, and the
 * evaluation waits to be scored (docs/results.md) by any replica's scorer.
 */
export async function closeInterview(step: Step): Promise<void> {
  const { tx, interview, session, now } = step;
  await completeSessions(tx, interview.evaluation_id, now);
  await insertScoringJob(tx, interview.evaluation_id, interview.environment_id);
  await writeOutboxEvent(tx, {
    type: "interview.completed",
    environmentId: interview.environment_id,
    data: {
      ...eventBase(session.evaluation, interview),
      status: interview.status,
      ended_reason: interview.ended_reason,
      completed_at: now.toISOString(),
    },
  });
}

/** What both interview events say about the interview. */
export function eventBase(evaluation: EvaluationRow, interview: InterviewRow) {
  return {
    evaluation_id: evaluation.id,
    interview_id: interview.id,
    subject_id: evaluation.subject_id,
    program_id: evaluation.program_id,
    bundle_id: interview.bundle_id,
    config_fingerprint: interview.config_fingerprint,
  };
}
