import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import {
  type GetEvaluationInterviewRequest,
  type GetEvaluationInterviewResponse,
  GetEvaluationInterviewResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { OperatorInterviewSchema } from "@evalp/proto/interview/v1/interview";
import { listEntries } from "../db/entries.js";
import { findEvaluation } from "../db/evaluations.js";
import { requireInterview } from "../db/interviews.js";
import { interviewMetrics } from "../db/metrics.js";
import { entryMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** docs/paging.md: interview pages default to 100 entries. */
export const DEFAULT_ENTRY_PAGE = 100;

/**
 * #15: the operator view of an evaluation's interview, a page of its entries after `after_seq`
 * (ascending) and metrics over all of them; 404 before the participant has started.
 */
export function getEvaluationInterview(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: GetEvaluationInterviewRequest,
    ctx: HandlerContext,
  ): Promise<GetEvaluationInterviewResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    const interview = await requireInterview(deps.pool, evaluation.id);
    const afterSeq = Number(req.afterSeq);
    const [entries, metrics] = await Promise.all([
      listEntries(deps.pool, interview.id, afterSeq, req.limit > 0 ? req.limit : DEFAULT_ENTRY_PAGE),
      interviewMetrics(deps.pool, interview.id),
    ]);
    return create(GetEvaluationInterviewResponseSchema, {
      interview: create(OperatorInterviewSchema, {
        interviewId: interview.id,
        evaluationId: evaluation.id,
        versionBundleId: interview.bundle_id,
        configFingerprint: interview.config_fingerprint,
        status: interview.status,
        startedAt: timestampFromDate(interview.started_at),
        lastActivityAt: timestampFromDate(interview.last_activity_at),
        completedAt: interview.completed_at ? timestampFromDate(interview.completed_at) : undefined,
        endedReason: interview.ended_reason ?? undefined,
        pausedReason: interview.paused_reason ?? undefined,
        nextAfterSeq: BigInt(entries.at(-1)?.seq ?? afterSeq),
        entries: entries.map(entryMessage),
        metrics,
      }),
    });
  };
}
