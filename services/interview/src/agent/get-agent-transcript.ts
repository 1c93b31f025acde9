import { create } from "@bufbuild/protobuf";
import {
  type GetAgentTranscriptRequest,
  type GetAgentTranscriptResponse,
  GetAgentTranscriptResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { listEntries } from "../db/entries.js";
import { requireInterview } from "../db/interviews.js";
import { TRANSCRIPT_KINDS, transcriptMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { DEFAULT_ENTRY_PAGE } from "../rpc/get-evaluation-interview.js";
import { requireAgent } from "./scope.js";

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
    const afterSeq = Number(req.afterSeq);
    const rows = await listEntries(
      deps.pool,
      interview.id,
      afterSeq,
      req.limit > 0 ? req.limit : DEFAULT_ENTRY_PAGE,
      TRANSCRIPT_KINDS,
    );
    return create(GetAgentTranscriptResponseSchema, {
      items: rows.map(transcriptMessage),
      nextAfterSeq: BigInt(rows.at(-1)?.seq ?? afterSeq),
    });
  };
}
