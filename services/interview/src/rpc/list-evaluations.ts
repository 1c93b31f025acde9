import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { pageResult } from "@evalp/kit";
import {
  type ListEvaluationsRequest,
  type ListEvaluationsResponse,
  ListEvaluationsResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { listEvaluationRows } from "../db/evaluations.js";
import { evaluationMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/**
 * `GET ENV/evaluations` (docs/results.md#listing-evaluations): the environment's evaluations,
 * newest first, filtered (the gateway has validated the filters), each with `scored_at`.
 */
export function listEvaluations(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: ListEvaluationsRequest, ctx: HandlerContext): Promise<ListEvaluationsResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const found = await listEvaluationRows(
      deps.pool,
      environment.environmentId,
      {
        status: req.status,
        subjectId: req.subjectId,
        bundleId: req.bundleId,
        programId: req.programId,
        createdAfter: req.createdAfter ? timestampDate(req.createdAfter) : undefined,
        createdBefore: req.createdBefore ? timestampDate(req.createdBefore) : undefined,
      },
      req.page,
    );
    const { rows, info } = pageResult(found, req.page);
    return create(ListEvaluationsResponseSchema, {
      items: rows.map((row) => ({
        ...evaluationMessage(row),
        scoredAt: row.scored_at ? timestampFromDate(row.scored_at) : undefined,
      })),
      page: info,
    });
  };
}
