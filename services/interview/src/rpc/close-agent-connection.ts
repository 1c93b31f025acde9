import { create } from "@bufbuild/protobuf";
import { isUuid } from "@evalp/kit";
import {
  type CloseAgentConnectionRequest,
  type CloseAgentConnectionResponse,
  CloseAgentConnectionResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { connectionLost } from "../agent/connections.js";
import { closeConnection } from "../db/agent-connections.js";
import type { InterviewRow } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** An agent socket closed: when it was the interview's last, the pause is scheduled. */
export function closeAgentConnection(deps: Deps, published: (interview: InterviewRow) => void) {
  return async (req: CloseAgentConnectionRequest): Promise<CloseAgentConnectionResponse> => {
    const sessionId = req.agent?.agentSessionId ?? "";
    if (!isUuid(req.connectionId) || !isUuid(sessionId)) return create(CloseAgentConnectionResponseSchema);
    // A superseded or expired session still closes what it opened: no agent check here, but a
    // connection is closed only by the session that opened it.
    const interviewId = await closeConnection(deps.pool, req.connectionId, sessionId);
    if (interviewId) {
      const changed = await connectionLost(deps, interviewId);
      if (changed) published(changed);
    }
    return create(CloseAgentConnectionResponseSchema);
  };
}
