import { create } from "@bufbuild/protobuf";
import { isUuid } from "@evalp/kit";
import {
  type OpenAgentConnectionRequest,
  type OpenAgentConnectionResponse,
  OpenAgentConnectionResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { AGENT_DISCONNECTED, AGENT_LEASE_MS } from "../agent/connections.js";
import { runAgentStep } from "../agent/scope.js";
import { openConnection } from "../db/agent-connections.js";
import { appendEntries } from "../db/entries.js";
import { clearAgentPause, saveInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { snapshotOfRow } from "../steps.js";

/**
 * An agent socket opened (docs/interview.md#the-agent-protocol): the agent owns the voice, the stored pause is called off,
 * and an interview paused because its agent went away resumes. A new revision only when
 * something the snapshot shows changed.
 */
export function openAgentConnection(deps: Deps) {
  return async (req: OpenAgentConnectionRequest): Promise<OpenAgentConnectionResponse> => {
    if (!isUuid(req.connectionId)) throw new Error("the gateway sent a connection id that is no UUID");
    const interview = await runAgentStep(deps, req.agent, async (step, agent) => {
      const { tx, interview, now } = step;
      await openConnection(tx, {
        id: req.connectionId,
        interviewId: interview.id,
        agentSessionId: agent.agentSessionId,
        leaseMs: AGENT_LEASE_MS,
      });
      await clearAgentPause(tx, interview.id);
      const resumes = interview.status === "paused" && interview.paused_reason === AGENT_DISCONNECTED;
      if (interview.agent.connected === true && !resumes) return interview;
      interview.agent = { ...interview.agent, connected: true };
      if (resumes) {
        interview.status = "active";
        interview.paused_reason = null;
        await appendEntries(
          tx,
          interview,
          [
            {
              kind: "status_changed",
              actor: "system",
              payload: { from: "paused", to: "active", reason: "agent_reconnected" },
            },
          ],
          now,
        );
      }
      interview.revision += 1;
      await saveInterview(tx, interview, now);
      return interview;
    });
    return create(OpenAgentConnectionResponseSchema, { interview: snapshotOfRow(interview) });
  };
}
