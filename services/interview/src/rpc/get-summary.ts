import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type GetSummaryRequest,
  type GetSummaryResponse,
  GetSummaryResponseSchema,
} from "@evalp/proto/interview/v1/analytics";
import type { Deps } from "../deps.js";
import type { RequireEnvironment } from "../environment-scope.js";

/** Contract §5b: below this many started interviews, nothing per question and no medians. */
export const PRIVACY_FLOOR = 5;

/** Interviews of the environment started in [starts_at, ends_at). */
const STARTED = `SELECT id, status, started_at, last_activity_at FROM interviews
  WHERE environment_id = $1 AND started_at >= $2 AND started_at < $3`;

type TotalsRow = {
  started: number;
  completed: number;
  median_questions: number | null;
  median_active_ms: number | null;
};

type QuestionRow = {
  question_id: string;
  asked: number;
  answered: number;
  corrections: number;
  median_answer_ms: number | null;
};

/**
 * `GET ENV/analytics/summary`: sessions started in the window and those of them completed,
 * medians (SQL `percentile_cont(0.5)`) of the questions answered per interview and of its active
 * time (start to last activity), and per question: interviews that were asked it and answered
 * it, corrections, the answer rate and the median time from the first ask to the first answer.
 */
export function getSummary(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: GetSummaryRequest, ctx: HandlerContext): Promise<GetSummaryResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const params = [
      environment.environmentId,
      req.startsAt ? timestampDate(req.startsAt) : new Date(0),
      req.endsAt ? timestampDate(req.endsAt) : new Date(0),
    ];
    const totals = await deps.pool.query<TotalsRow>(
      `WITH started AS (${STARTED}), per AS (
         SELECT s.status, extract(epoch FROM s.last_activity_at - s.started_at) * 1000 AS active_ms,
                (SELECT count(DISTINCT e.question_id) FROM interview_entries e
                  WHERE e.interview_id = s.id AND e.kind IN ('answer_recorded', 'answer_corrected')) AS questions
         FROM started s
       )
       SELECT count(*) AS started, count(*) FILTER (WHERE status = 'completed') AS completed,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY questions) AS median_questions,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY active_ms) AS median_active_ms
       FROM per`,
      params,
    );
    const row = totals.rows[0] as TotalsRow;
    const floor = row.started < PRIVACY_FLOOR;
    const questions = floor
      ? []
      : (
          await deps.pool.query<QuestionRow>(
            `WITH started AS (${STARTED}), per AS (
               SELECT e.interview_id, e.question_id,
                      bool_or(e.kind = 'question_asked') AS asked,
                      bool_or(e.kind IN ('answer_recorded', 'answer_corrected')) AS answered,
                      count(*) FILTER (WHERE e.kind = 'answer_corrected') AS corrections,
                      min(e.received_at) FILTER (WHERE e.kind = 'question_asked') AS first_asked,
                      min(e.received_at) FILTER (WHERE e.kind = 'answer_recorded') AS first_answered
               FROM interview_entries e JOIN started s ON s.id = e.interview_id
               WHERE e.question_id IS NOT NULL
                 AND e.kind IN ('question_asked', 'answer_recorded', 'answer_corrected')
               GROUP BY e.interview_id, e.question_id
             )
             SELECT question_id, count(*) FILTER (WHERE asked) AS asked,
                    count(*) FILTER (WHERE answered) AS answered, sum(corrections)::bigint AS corrections,
                    percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM first_answered - first_asked) * 1000)
                      FILTER (WHERE first_asked IS NOT NULL AND first_answered IS NOT NULL) AS median_answer_ms
             FROM per GROUP BY question_id ORDER BY question_id`,
            params,
          )
        ).rows;
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
    });
  };
}
