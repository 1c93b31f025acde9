import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import {
  type ListEvaluationResultsRequest,
  type ListEvaluationResultsResponse,
  ListEvaluationResultsResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { findEvaluation } from "../db/evaluations.js";
import { listResults, resultMessage } from "../db/results.js";
import type { Deps } from "../deps.js";

/** `GET ENV/evaluations/{id}/results`: every result of the evaluation, oldest first (none before it is scored). */
export function listEvaluationResults(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: ListEvaluationResultsRequest,
    ctx: HandlerContext,
  ): Promise<ListEvaluationResultsResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    const rows = await listResults(deps.pool, evaluation.id);
    return create(ListEvaluationResultsResponseSchema, { items: rows.map(resultMessage) });
  };
}
