import { AppError, isUuid, type Queryable } from "@evalp/kit";
import type { ParticipantRef } from "@evalp/proto/interview/v1/participant";
import { findParticipantSession } from "./db/evaluations.js";
import type { EvaluationRow } from "./db/rows.js";

/** A participant session with its evaluation. */
export type SessionContext = {
  sessionId: string;
  expiresAt: Date;
  completedAt: Date | null;
  evaluation: EvaluationRow;
};

const unauthenticated = () => new AppError("unauthenticated", "Authentication required.");

/**
 * The session a verified token names (the gateway checked its signature and `exp`). A session
 * this plane does not know, or of another evaluation than the token says, is 401
 * `unauthenticated`; one past its `expires_at` is 401 `token_expired`; a revoked one is 401
 * `session_superseded` when a newer session of its evaluation replaced it, else 401
 * `unauthenticated` (docs/interview.md#participant-sessions). Every participant request and
 * every realtime upgrade comes through here, so a revocation holds at once on every gateway. A
 * completed session (its interview is over) still reads: start and transcript answer, steps
 * answer 409.
 */
export async function requireSession(
  db: Queryable,
  ref: ParticipantRef | undefined,
): Promise<SessionContext> {
  if (!ref || !isUuid(ref.sessionId) || !isUuid(ref.evaluationId)) throw unauthenticated();
  const row = await findParticipantSession(db, ref.sessionId);
  if (!row || row.id !== ref.evaluationId) throw unauthenticated();
  if (row.revoked_reason === "superseded") {
    throw new AppError("session_superseded", "A newer participant session replaced this one.");
  }
  if (row.revoked_reason === "revoked") {
    throw new AppError("unauthenticated", "This participant session was revoked.");
  }
  if (row.expired) throw new AppError("token_expired", "The participant session has expired.");
  const { session_id, expires_at, completed_at, expired: _, revoked_reason: _r, ...evaluation } = row;
  return { sessionId: session_id, expiresAt: expires_at, completedAt: completed_at, evaluation };
}
