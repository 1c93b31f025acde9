import { create } from "@bufbuild/protobuf";
import {
  type GetAgentInterviewRequest,
  type GetAgentInterviewResponse,
  GetAgentInterviewResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { requireAgent } from "../agent/scope.js";
import { requireInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { snapshotOfRow } from "../steps.js";

/** `GET /v1/agent/interview`: the snapshot as the agent's token's interview stands. */
export function getAgentInterview(deps: Deps) {
  return async (req: GetAgentInterviewRequest): Promise<GetAgentInterviewResponse> => {
    const agent = await requireAgent(deps.pool, req.agent);
    const interview = await requireInterview(deps.pool, agent.evaluation.id);
    return create(GetAgentInterviewResponseSchema, { interview: snapshotOfRow(interview) });
  };
}
