import { newId, type Queryable } from "@evalp/kit";
import { randomBase62, sha256 } from "../credentials.js";

/** Invitations live 7 days, password resets 1 hour (docs/endpoints.md, docs/errors.md). */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const RESET_TTL_MS = 60 * 60 * 1000;

/** A single-use token: 43 base62 characters (~256 bits); only its hash is stored. */
export function newSingleUseToken(): { token: string; hash: Buffer } {
  const token = randomBase62(43);
  return { token, hash: sha256(token) };
}

export async function createInvitation(db: Queryable, membershipId: string): Promise<string> {
  const { token, hash } = newSingleUseToken();
  await db.query(
    "INSERT INTO invitations (id, membership_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)",
    [newId(), membershipId, hash, new Date(Date.now() + INVITATION_TTL_MS)],
  );
  return token;
}

export async function createPasswordReset(db: Queryable, userId: string): Promise<string> {
  const { token, hash } = newSingleUseToken();
  await db.query(
    "INSERT INTO password_resets (id, user_id, token_hash, expires_at) VALUES ($1, $2, $3, $4)",
    [newId(), userId, hash, new Date(Date.now() + RESET_TTL_MS)],
  );
  return token;
}
