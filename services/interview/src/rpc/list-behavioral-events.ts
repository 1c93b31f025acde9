import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { pageResult } from "@evalp/kit";
import {
  BehavioralEventSchema,
  type ListBehavioralEventsRequest,
  type ListBehavioralEventsResponse,
  ListBehavioralEventsResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { listEventRows } from "../db/behavioral-events.js";
import { findEvaluation } from "../db/evaluations.js";
import type { Deps } from "../deps.js";

/** The staff view of an evaluation's behavioral events, newest first (BehavioralEventPage). */
export function listBehavioralEvents(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: ListBehavioralEventsRequest,
    ctx: HandlerContext,
  ): Promise<ListBehavioralEventsResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    const found = await listEventRows(deps.pool, evaluation.id, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListBehavioralEventsResponseSchema, {
      items: rows.map((row) =>
        create(BehavioralEventSchema, {
          id: row.id,
          type: row.type,
          occurredAt: timestampFromDate(row.occurred_at),
          questionId: row.question_id ?? undefined,
          elapsedMs: row.elapsed_ms ?? undefined,
          createdAt: timestampFromDate(row.created_at),
        }),
      ),
      page: info,
    });
  };
}
