import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  enforceQuota,
  forwardedCall,
  MAX_TOKEN_SECONDS,
  newId,
  type RequireEnvironment,
  signParticipantToken,
  withTransaction,
} from "@evalp/kit";
import {
  type CreateParticipantSessionRequest,
  type CreateParticipantSessionResponse,
  CreateParticipantSessionResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import {
  countActiveSessions,
  findEvaluation,
  insertParticipantSession,
  lockEvaluation,
  supersedeParticipantSessions,
} from "../db/evaluations.js";
import type { Deps } from "../deps.js";
import { invalidTransition, participantStatus } from "../flow/statuses.js";

/** docs/interview.md: `ttl_seconds` defaults to 900. */
export const DEFAULT_SESSION_SECONDS = 900;

/**
 * A participant session of the evaluation and its token (a JWT bound to the session, at most
 * 1 h), counted against `active_participant_sessions` while unexpired, not completed and not
 * revoked. It supersedes the evaluation's older sessions (docs/interview.md#participant-sessions):
 * they are revoked in the same transaction (so they no longer count against the quota the new
 * one is checked against), and their sockets are closed on every gateway (the realtime frame
 * `revoked`, published after the commit). An evaluation whose interview is over takes no new
 * session (409 `invalid_transition`).
 */
export function createParticipantSession(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: CreateParticipantSessionRequest,
    ctx: HandlerContext,
  ): Promise<CreateParticipantSessionResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const environmentId = environment.environmentId;
    const evaluation = await findEvaluation(deps.pool, environmentId, req.evaluationId);
    if (evaluation.status === "completed" || evaluation.status === "ended_incomplete") {
      const from = participantStatus(evaluation.status, true);
      throw invalidTransition(from, "in_progress", "interview_over", { evaluation_id: evaluation.id });
    }
    const ttl = Math.min(
      req.ttlSeconds > 0 ? req.ttlSeconds : DEFAULT_SESSION_SECONDS,
      MAX_TOKEN_SECONDS.participant,
    );
    // Whole seconds, so that the token's `exp` and `expires_at` are the same instant.
    const expiresAt = new Date(Math.floor((Date.now() + ttl * 1000) / 1000) * 1000);
    const sessionId = newId();
    const revokedIds = await withTransaction(deps.pool, async (tx) => {
      await lockEvaluation(tx, evaluation.id);
      const superseded = await supersedeParticipantSessions(tx, evaluation.id);
      await enforceQuota(tx, {
        environmentId,
        counter: "active_participant_sessions",
        limit: async () => {
          const answer = await deps.control.quotas.getLimits({ environmentId }, forwardedCall(ctx));
          return Number(answer.limits?.activeParticipantSessions ?? 0n);
        },
        usage: () => countActiveSessions(tx, environmentId),
      });
      await insertParticipantSession(tx, {
        id: sessionId,
        evaluationId: evaluation.id,
        environmentId,
        expiresAt,
      });
      return superseded;
    });
    deps.realtime.revoked(evaluation.id, revokedIds, true);
    const token = await signParticipantToken(
      deps.config.JWT_SECRET,
      "participant",
      { sessionId, evaluationId: evaluation.id, environmentId },
      expiresAt,
    );
    return create(CreateParticipantSessionResponseSchema, {
      sessionId,
      participantToken: token,
      expiresAt: timestampFromDate(expiresAt),
      revokedSessionIds: revokedIds,
    });
  };
}
