import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import {
  type GetEvaluationRequest,
  type GetEvaluationResponse,
  GetEvaluationResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { findEvaluation } from "../db/evaluations.js";
import { evaluationMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** An evaluation of the environment, with its status (`pending` until the participant starts). */
export function getEvaluation(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: GetEvaluationRequest, ctx: HandlerContext): Promise<GetEvaluationResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const row = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    return create(GetEvaluationResponseSchema, { evaluation: evaluationMessage(row) });
  };
}
