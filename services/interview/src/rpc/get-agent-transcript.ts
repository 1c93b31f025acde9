import { create } from "@bufbuild/protobuf";
import {
  type GetAgentTranscriptRequest,
  type GetAgentTranscriptResponse,
  GetAgentTranscriptResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { requireAgent } from "../agent/scope.js";
import { requireInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { transcriptPage } from "../rpc/get-transcript.js";

/**
 * `GET /v1/agent/interview/transcript` (docs/interview.md#picking-up-an-interview): the
 * participant's transcript as the agent's token reads it — every question asked, answer and
 * utterance, the participant's and the agent's — so that a replacement agent reloads the
 * conversation and goes on.
 */
export function getAgentTranscript(deps: Deps) {
  return async (req: GetAgentTranscriptRequest): Promise<GetAgentTranscriptResponse> => {
    const agent = await requireAgent(deps.pool, req.agent);
    const interview = await requireInterview(deps.pool, agent.evaluation.id);
    return create(GetAgentTranscriptResponseSchema, await transcriptPage(deps, interview.id, req));
  };
}
