import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import {
  type GetSummaryRequest,
  type GetSummaryResponse,
  GetSummaryResponseSchema,
} from "@evalp/proto/interview/v1/analytics";
import { axisMetrics, questionMetrics, summaryTotals } from "../db/analytics.js";
import type { Deps } from "../deps.js";

/** docs/interview.md: below this many started interviews, nothing per question and no medians. */
export const PRIVACY_FLOOR = 5;

/**
 * `GET ENV/analytics/summary`: sessions started in the window and those of them completed,
 * medians (SQL `percentile_cont(0.5)`) of the questions answered per interview and of its active
 * time (start to last activity), and per question: interviews that were asked it and answered
 * it, corrections, the answer rate and the median time from the first ask to the first answer;
 * per scorecard axis of their latest results, the scores' count, mean, median and bands.
 */
export function getSummary(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: GetSummaryRequest, ctx: HandlerContext): Promise<GetSummaryResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const window = {
      environmentId: environment.environmentId,
      startsAt: req.startsAt ? timestampDate(req.startsAt) : new Date(0),
      endsAt: req.endsAt ? timestampDate(req.endsAt) : new Date(0),
    };
    const row = await summaryTotals(deps.pool, window);
    const floor = row.started < PRIVACY_FLOOR;
    const [questions, axes] = floor
      ? [[], []]
      : await Promise.all([questionMetrics(deps.pool, window), axisMetrics(deps.pool, window)]);
    return create(GetSummaryResponseSchema, {
      sessionsStarted: BigInt(row.started),
      sessionsCompleted: BigInt(row.completed),
      completionRate: row.started === 0 ? 0 : row.completed / row.started,
      medianQuestions: floor ? undefined : (row.median_questions ?? undefined),
      medianActiveMs: floor ? undefined : (row.median_active_ms ?? undefined),
      questionMetrics: questions.map(
        (question) =>
          ({
            question_id: question.question_id,
            asked: question.asked,
            answered: question.answered,
            answer_rate: question.asked === 0 ? 0 : question.answered / question.asked,
            corrections: question.corrections,
            median_answer_ms: question.median_answer_ms,
          }) as JsonObject,
      ),
      privacyFloorApplied: floor,
      axisMetrics: axes.map((axis) => axis as unknown as JsonObject),
    });
  };
}
