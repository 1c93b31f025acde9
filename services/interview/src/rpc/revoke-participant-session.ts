import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { notFound, withTransaction } from "@evalp/kit";
import {
  type RevokeParticipantSessionRequest,
  type RevokeParticipantSessionResponse,
  RevokeParticipantSessionResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { findEvaluation, revokeParticipantSession as revokeRow } from "../db/evaluations.js";
import type { Deps } from "../deps.js";

/**
 * `DELETE ENV/evaluations/{evaluation_id}/participant-sessions/{session_id}`
 * (docs/interview.md#participant-sessions): the session's tokens open nothing more (every
 * participant request and realtime upgrade reads the session here, participant-scope.ts) and its
 * sockets close with 4401 on every gateway (the realtime frame `revoked`, published after the
 * commit). A session already revoked answers the same (DELETE is idempotent), and its frame is
 * published again: a gateway that missed the first one closes its sockets now. Another
 * evaluation's session, or none, is 404.
 */
export function revokeParticipantSession(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (
    req: RevokeParticipantSessionRequest,
    ctx: HandlerContext,
  ): Promise<RevokeParticipantSessionResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const evaluation = await findEvaluation(deps.pool, environment.environmentId, req.evaluationId);
    // Refused inside the transaction: a 404 commits nothing (not even the Idempotency-Key's record).
    const outcome = await withTransaction(deps.pool, async (tx) => {
      const revoked = await revokeRow(tx, evaluation.id, req.sessionId);
      if (!revoked) throw notFound("participant_session");
      return revoked;
    });
    deps.realtime.revoked(evaluation.id, [req.sessionId], false);
    return create(RevokeParticipantSessionResponseSchema, { revoked: outcome === "revoked" });
  };
}
