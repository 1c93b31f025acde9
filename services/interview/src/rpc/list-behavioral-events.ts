import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { pageClause, pageResult } from "@evalp/kit";
import {
  BehavioralEventSchema,
  type ListBehavioralEventsRequest,
  type ListBehavioralEventsResponse,
  ListBehavioralEventsResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { findEvaluation } from "../db/evaluations.js";
import type { Deps } from "../deps.js";
import type { RequireEnvironment } from "../environment-scope.js";

type EventRow = {
  id: string;
  type: string;
  occurred_at: Date;
  question_id: string | null;
  elapsed_ms: number | null;
  created_at: Date;
};

/** The staff view of an evaluation's behavioral events, newest first (BehavioralEventPage). */
export function listBehavioralEvents(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: ListBehavioralEventsRequest,
    ctx: HandlerContext,
  ): Promise<ListBehavioralEventsResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    const page = pageClause(req.page, 2);
    const found = await deps.pool.query<EventRow>(
      `SELECT id, type, occurred_at, question_id, elapsed_ms, created_at FROM behavioral_events
       WHERE evaluation_id = $1 AND ${page.where} ${page.tail}`,
      [evaluation.id, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
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
