import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { AppError } from "@evalp/kit";
import {
  type GetEvaluationResultRequest,
  type GetEvaluationResultResponse,
  GetEvaluationResultResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { findEvaluation } from "../db/evaluations.js";
import { latestResult, resultMessage } from "../db/results.js";
import type { Deps } from "../deps.js";

/** 409 `result_not_ready`: the evaluation has no result yet (its interview has not ended, or is being scored). */
export function resultNotReady(status: string): AppError {
  return new AppError("result_not_ready", "The evaluation has not been scored yet.", { status });
}

/**
 * `GET ENV/evaluations/{id}/result` (docs/results.md): the latest result, the rescores' included;
 * 409 `result_not_ready` (with the evaluation's status) until the first is stored.
 */
export function getEvaluationResult(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: GetEvaluationResultRequest,
    ctx: HandlerContext,
  ): Promise<GetEvaluationResultResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    const result = await latestResult(deps.pool, evaluation.id);
    if (!result) throw resultNotReady(evaluation.status);
    return create(GetEvaluationResultResponseSchema, { result: resultMessage(result) });
  };
}
