import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { MAX_TOKEN_SECONDS, newId, signParticipantToken, withTransaction } from "@evalp/kit";
import {
  type CreateAgentSessionRequest,
  type CreateAgentSessionResponse,
  CreateAgentSessionResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { insertAgentSession, supersedeSessions } from "../db/agent.js";
import { closeSessionConnections } from "../db/agent-connections.js";
import { findEvaluation } from "../db/evaluations.js";
import { clearAgentPause, requireInterview, saveInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";

/** docs/interview.md#the-agent-protocol: `ttl_seconds` 60-900, default 900. */
export const DEFAULT_AGENT_SECONDS = 900;

/** The agent door: the participant door's address with `/v1/agent/realtime` as its path. */
export function agentServerUrl(realtimeUrl: string): string {
  const url = new URL(realtimeUrl);
  url.pathname = "/v1/agent/realtime";
  return url.toString();
}

/**
 * `POST ENV/evaluations/{id}/agent-sessions` (docs/interview.md#the-agent-protocol): an agent session bound to the
 * evaluation's interview (404 before the participant started) and its agent token. The
 * interview row is taken FOR UPDATE so that of two concurrent sessions one supersedes the other;
 * the superseded ids go out to every gateway (the realtime frame `superseded`), which close
 * their sockets.
 */
export function createAgentSession(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: CreateAgentSessionRequest, ctx: HandlerContext): Promise<CreateAgentSessionResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    const ttl = Math.min(
      req.ttlSeconds > 0 ? req.ttlSeconds : DEFAULT_AGENT_SECONDS,
      MAX_TOKEN_SECONDS.agent,
    );
    const expiresAt = new Date(Math.floor((Date.now() + ttl * 1000) / 1000) * 1000);
    const agentSessionId = newId();
    const { interviewId, superseded, changed } = await withTransaction(deps.pool, async (tx) => {
      const interview = await requireInterview(tx, evaluation.id, true);
      const supersededIds = await supersedeSessions(tx, interview.id);
      // The superseded sessions' sockets are closed by the gateways that hold them: they no
      // longer count, and no agent is connected until the new session's socket opens (no pause:
      // the interview was handed over, not left).
      let disconnected = false;
      if (supersededIds.length > 0) {
        await closeSessionConnections(tx, supersededIds);
        await clearAgentPause(tx, interview.id);
        if (interview.agent.connected === true) {
          interview.agent = { ...interview.agent, connected: false };
          interview.revision += 1;
          await saveInterview(tx, interview, new Date());
          disconnected = true;
        }
      }
      await insertAgentSession(tx, {
        id: agentSessionId,
        evaluationId: evaluation.id,
        interviewId: interview.id,
        environmentId: evaluation.environment_id,
        expiresAt,
      });
      return {
        interviewId: interview.id,
        superseded: supersededIds,
        changed: disconnected ? interview : null,
      };
    });
    if (changed) deps.realtime.changed(changed);
    const token = await signParticipantToken(
      deps.config.JWT_SECRET,
      "agent",
      { sessionId: agentSessionId, evaluationId: evaluation.id, environmentId: evaluation.environment_id },
      expiresAt,
    );
    return create(CreateAgentSessionResponseSchema, {
      agentSessionId,
      agentToken: token,
      serverUrl: agentServerUrl(deps.config.REALTIME_URL),
      expiresAt: timestampFromDate(expiresAt),
      interviewId,
      supersededSessionIds: superseded,
    });
  };
}
