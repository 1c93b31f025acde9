import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AppError,
  forwardedCall,
  newId,
  type RequireEnvironment,
  refuseErasedSubject,
  withTransaction,
} from "@evalp/kit";
import {
  type RescoreEvaluationRequest,
  type RescoreEvaluationResponse,
  RescoreEvaluationResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { findEvaluation } from "../db/evaluations.js";
import { endResult, resultMessage } from "../db/results.js";
import type { Deps } from "../deps.js";
import { scoreAgainst, storeResult } from "../scoring/score.js";
import { resultNotReady } from "./get-evaluation-result.js";

/**
 * `POST ENV/evaluations/{id}/rescore` (docs/results.md#rescoring): the answers, context and signals
 * of the result stored when the interview ended, scored against another `published` bundle of the
 * app (else 409 `bundle_not_published`), stored as a new result with its `evaluation.scored` event.
 * The evaluation of an erased subject is not rescored (404 `subject_erased`): its inputs are gone.
 */
export function rescoreEvaluation(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: RescoreEvaluationRequest, ctx: HandlerContext): Promise<RescoreEvaluationResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    // An erased subject's results keep their numbers, not what they were scored on.
    await refuseErasedSubject(deps.pool, evaluation.subject_id);
    // What the request names first: a bundle of another app is 404, one not published 409,
    // whether or not the evaluation has been scored yet.
    const call = forwardedCall(ctx);
    const named = await deps.platform.bundles.getBundle(
      {
        app: { organizationId: evaluation.organization_id, appId: evaluation.app_id },
        bundleId: req.bundleId,
      },
      call,
    );
    notPublished(req.bundleId, named.bundle?.status ?? "");
    const first = await endResult(deps.pool, evaluation.id);
    if (!first) throw resultNotReady(evaluation.status);
    const scored = await scoreAgainst(deps, evaluation, req.bundleId, first.inputs, call);
    // Published when looked up; checked again as scored (a move in between).
    notPublished(req.bundleId, scored.status);
    const stored = await withTransaction(deps.pool, (tx) =>
      storeResult(tx, evaluation, {
        ...scored,
        trigger: `rescore:${newId()}`,
        outcome: first.outcome,
        inputs: first.inputs,
      }),
    );
    if (!stored) throw new Error("a new rescore trigger was already stored");
    return create(RescoreEvaluationResponseSchema, { result: resultMessage(stored) });
  };
}

function notPublished(bundleId: string, status: string): void {
  if (status !== "published") {
    throw new AppError("bundle_not_published", "Rescoring runs on published bundles only.", {
      bundle_id: bundleId,
      status,
    });
  }
}
