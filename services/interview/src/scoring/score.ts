import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type CallMetadata, metadataHeaders, type Queryable, writeOutboxEvent } from "@evalp/kit";
import { interviewMetrics } from "../db/metrics.js";
import { insertResult, type ResultRow, type ScoringInputs } from "../db/results.js";
import type { EvaluationRow, InterviewRow } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** The calls a scoring makes: forwarded from an operator's request, or the worker's own. */
export type ScoringCall = { headers: Record<string, string> };

/** The worker's calls carry a request id of their own, so its RPCs can be followed in the logs. */
export function workerCall(evaluationId: string): ScoringCall {
  const meta: CallMetadata = { requestId: `score.${evaluationId}` };
  return { headers: metadataHeaders(meta) };
}

/**
 * What an ended interview is scored on (docs/results.md): its final answers by question id
 * (corrections applied), the subject's `{external_id, profile}` as the context's `subject` (the
 * context component's defaults are merged under it by the platform, as preview merges them), and
 * the operator view's integer metrics as signals. A subject that no longer exists is `null`.
 */
export async function scoringInputs(
  deps: Deps,
  db: Queryable,
  evaluation: EvaluationRow,
  interview: InterviewRow,
  call: ScoringCall,
): Promise<ScoringInputs> {
  const answers = Object.fromEntries(
    Object.entries(interview.answers).map(([questionId, state]) => [questionId, state.answer]),
  );
  const metrics = await interviewMetrics(db, interview.id);
  const signals = {
    attempts: Number(metrics.attempts),
    clarifications: Number(metrics.clarifications),
    consistency_follow_ups: Number(metrics.consistencyFollowUps),
    corrections: Number(metrics.corrections),
    duration_seconds: Number(metrics.durationSeconds),
    rejected_proposals: Number(metrics.rejectedProposals),
    scenario_evidence: Number(metrics.scenarioEvidence),
    scenario_gaps: Number(metrics.scenarioGaps),
  };
  let subject: Record<string, unknown> | null = null;
  try {
    const found = await deps.control.subjects.getSubject(
      {
        environment: {
          organizationId: evaluation.organization_id,
          appId: evaluation.app_id,
          environmentId: evaluation.environment_id,
        },
        subjectId: evaluation.subject_id,
      },
      call,
    );
    subject = { external_id: found.subject?.externalId ?? null, profile: found.subject?.profile ?? {} };
  } catch (error) {
    if (!(error instanceof ConnectError && error.code === Code.NotFound)) throw error;
  }
  return { answers, context: { subject }, signals };
}

/** Scores `inputs` against a bundle of the evaluation's app, through the platform's preview evaluation. */
export async function scoreAgainst(
  deps: Deps,
  evaluation: EvaluationRow,
  bundleId: string,
  inputs: ScoringInputs,
  call: ScoringCall,
) {
  const scored = await deps.platform.bundles.scoreBundle(
    {
      app: { organizationId: evaluation.organization_id, appId: evaluation.app_id },
      bundleId,
      answers: inputs.answers as JsonObject,
      context: inputs.context as JsonObject,
      signals: inputs.signals,
      respondentId: evaluation.subject_id,
    },
    call,
  );
  return {
    bundleId,
    status: scored.bundle?.status ?? "",
    fingerprint: scored.bundle?.fingerprint ?? "",
    report: (scored.report ?? {}) as Record<string, unknown>,
    trace: (scored.trace ?? {}) as Record<string, unknown>,
  };
}

/**
 * Stores a result and, in the same transaction, its `evaluation.scored` event (without the trace):
 * one event per stored result. Undefined when this (evaluation, trigger) was stored already.
 */
export async function storeResult(
  tx: Queryable,
  evaluation: EvaluationRow,
  result: Pick<ResultRow, "trigger" | "outcome" | "inputs"> & Awaited<ReturnType<typeof scoreAgainst>>,
): Promise<ResultRow | undefined> {
  const stored = await insertResult(tx, {
    evaluation_id: evaluation.id,
    environment_id: evaluation.environment_id,
    trigger: result.trigger,
    subject_id: evaluation.subject_id,
    bundle_id: result.bundleId,
    fingerprint: result.fingerprint,
    outcome: result.outcome,
    inputs: result.inputs,
    report: result.report,
    trace: result.trace,
  });
  if (!stored) return undefined;
  await writeOutboxEvent(tx, {
    type: "evaluation.scored",
    environmentId: evaluation.environment_id,
    data: {
      evaluation_id: stored.evaluation_id,
      subject_id: stored.subject_id,
      bundle_id: stored.bundle_id,
      fingerprint: stored.fingerprint,
      outcome: stored.outcome,
      report: stored.report,
    },
  });
  return stored;
}
