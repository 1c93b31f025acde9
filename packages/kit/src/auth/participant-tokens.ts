import { createHmac } from "node:crypto";
import { errors, jwtVerify, SignJWT } from "jose";
import { AppError } from "../core/errors.js";

/**
 * The two tokens of the participant side (docs/authentication.md, docs/interview.md), told apart by their JOSE `typ`
 * header (RFC 8725 explicit typing): a participant token opens `/v1/participant/*` (≤ 1 h), a
 * connection token opens the realtime door (≤ 15 min). Neither is accepted where the other is,
 * and neither is an operator credential. A third, the agent token (docs/interview.md#the-agent-protocol, ≤ 15 min), is
 * bound to one agent session of one interview (`sub` = the agent session) and opens `/v1/agent/*`.
 */
export type ParticipantTokenUse = "participant" | "connection" | "agent";

/** What a token binds: one participant session of one evaluation. */
export type ParticipantClaims = { sessionId: string; evaluationId: string; environmentId: string };

const TYP: Record<ParticipantTokenUse, string> = {
  participant: "evalp-participant+jwt",
  connection: "evalp-connection+jwt",
  agent: "evalp-agent+jwt",
};
const ISSUER = "evalp";

/** docs/authentication.md: a participant token lives at most 1 h; docs/interview.md: a connection token at most 15 min. */
export const MAX_TOKEN_SECONDS: Record<ParticipantTokenUse, number> = {
  participant: 3600,
  connection: 900,
  agent: 900,
};

/**
 * The signing key, derived from JWT_SECRET for this one purpose so that the same secret's other
 * uses (signed cursors) can never produce or accept a participant token.
 */
function keyOf(secret: string): Uint8Array {
  return createHmac("sha256", secret).update("evalp participant tokens v1").digest();
}

/** A JWT (HS256) of `use` for the session, expiring at `expiresAt` (whole seconds). */
export async function signParticipantToken(
  secret: string,
  use: ParticipantTokenUse,
  claims: ParticipantClaims,
  expiresAt: Date,
): Promise<string> {
  return new SignJWT({ evaluation_id: claims.evaluationId, environment_id: claims.environmentId })
    .setProtectedHeader({ alg: "HS256", typ: TYP[use] })
    .setIssuer(ISSUER)
    .setSubject(claims.sessionId)
    .setIssuedAt()
    .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
    .sign(keyOf(secret));
}

/** True when a presented credential has the shape of a JWT (three base64url parts). */
export function looksLikeJwt(credential: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(credential);
}

/**
 * The claims of a token of `use`, or 401: `token_expired` past `exp` (checked only once the
 * signature holds), `unauthenticated` for anything else, another use of token included.
 */
export async function verifyParticipantToken(
  secret: string,
  use: ParticipantTokenUse,
  token: string,
): Promise<ParticipantClaims & { expiresAt: Date }> {
  try {
    const { payload } = await jwtVerify(token, keyOf(secret), {
      algorithms: ["HS256"],
      typ: TYP[use],
      issuer: ISSUER,
      requiredClaims: ["sub", "exp"],
    });
    const { sub, exp, evaluation_id: evaluationId, environment_id: environmentId } = payload;
    if (typeof sub !== "string" || typeof evaluationId !== "string" || typeof environmentId !== "string") {
      throw new AppError("unauthenticated", "Authentication required.");
    }
    return { sessionId: sub, evaluationId, environmentId, expiresAt: new Date((exp ?? 0) * 1000) };
  } catch (error) {
    if (error instanceof errors.JWTExpired) {
      throw new AppError("token_expired", `The ${use} token has expired.`);
    }
    if (error instanceof AppError) throw error;
    throw new AppError("unauthenticated", "Authentication required.");
  }
}
