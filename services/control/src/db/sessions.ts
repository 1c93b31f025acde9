import type { Queryable } from "@evalp/kit";
import { newId } from "@evalp/kit";
import { newAccessToken, sha256 } from "../credentials.js";

/** Access tokens live 12 hours (docs/authentication.md). */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** Opens a session for a user and returns its token, which exists nowhere else once returned. */
export async function openSession(
  db: Queryable,
  userId: string,
  activeOrganizationId: string | null,
): Promise<{ token: string; expiresAt: Date }> {
  const token = newAccessToken();
  const expiresAt = new Date(Math.floor(Date.now() / 1000) * 1000 + SESSION_TTL_MS);
  await db.query(
    `INSERT INTO sessions (id, user_id, token_hash, active_organization_id, expires_at)
     VALUES ($1, $2, $3, $4, $5)`,
    [newId(), userId, sha256(token), activeOrganizationId, expiresAt],
  );
  return { token, expiresAt };
}
