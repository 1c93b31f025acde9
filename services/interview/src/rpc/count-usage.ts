import { create } from "@bufbuild/protobuf";
import { isUuid } from "@evalp/kit";
import {
  type CountUsageRequest,
  type CountUsageResponse,
  CountUsageResponseSchema,
} from "@evalp/proto/common/v1/usage";
import { countActiveSessions, countEvaluations, largestEventBatch } from "../db/evaluations.js";
import type { Deps } from "../deps.js";

/** The counters this plane owns, counted from its rows, for control's `GET ENV/quotas`. */
export function countUsage(deps: Deps) {
  return async (req: CountUsageRequest): Promise<CountUsageResponse> => {
    if (!isUuid(req.environmentId)) return create(CountUsageResponseSchema, { usage: {} });
    const [evaluations, sessions, batch] = await Promise.all([
      countEvaluations(deps.pool, req.environmentId),
      countActiveSessions(deps.pool, req.environmentId),
      largestEventBatch(deps.pool, req.environmentId),
    ]);
    return create(CountUsageResponseSchema, {
      usage: {
        evaluations: BigInt(evaluations),
        active_participant_sessions: BigInt(sessions),
        behavioral_event_batch_size: BigInt(batch),
      },
    });
  };
}
