import { newId, type Queryable } from "@evalp/kit";
import { sha256 } from "../credentials.js";

/*
 * Users and what they hold: their memberships' writes and reads by user, their sessions, and the
 * single-use tokens (invitations, password resets) that reach them.
 */

/** A user by email (any case). */
export async function findUserByEmail(
  db: Queryable,
  email: string,
): Promise<{ id: string; email: string; password_hash: string | null } | undefined> {
  const found = await db.query<{ id: string; email: string; password_hash: string | null }>(
    "SELECT id, email, password_hash FROM users WHERE lower(email) = lower($1)",
    [email],
  );
  return found.rows[0];
}

/** A user by id; `password_hash` null while invited (`lock`: held for the transaction). */
export async function findUserById(
  db: Queryable,
  userId: string,
  lock = false,
): Promise<{ id: string; email: string; password_hash: string | null } | undefined> {
  const found = await db.query<{ id: string; email: string; password_hash: string | null }>(
    `SELECT id, email, password_hash FROM users WHERE id = $1${lock ? " FOR UPDATE" : ""}`,
    [userId],
  );
  return found.rows[0];
}

/** Inserts a user with a password (sign-up). */
export async function insertUser(db: Queryable, user: { id: string; email: string; passwordHash: string }) {
  await db.query("INSERT INTO users (id, email, password_hash) VALUES ($1, $2, $3)", [
    user.id,
    user.email,
    user.passwordHash,
  ]);
}

/** The user of an email, created without a password (invited) when there is none; whether it has one. */
export async function ensureUser(db: Queryable, email: string): Promise<{ id: string; active: boolean }> {
  await db.query("INSERT INTO users (id, email) VALUES ($1, $2) ON CONFLICT (lower(email)) DO NOTHING", [
    newId(),
    email,
  ]);
  const user = await db.query<{ id: string; active: boolean }>(
    "SELECT id, password_hash IS NOT NULL AS active FROM users WHERE lower(email) = lower($1)",
    [email],
  );
  return user.rows[0] as { id: string; active: boolean };
}

export async function setPassword(db: Queryable, userId: string, passwordHash: string): Promise<void> {
  await db.query("UPDATE users SET password_hash = $2, updated_at = clock_timestamp() WHERE id = $1", [
    userId,
    passwordHash,
  ]);
}

/** Inserts a membership. */
export async function insertMembership(
  db: Queryable,
  membership: {
    id: string;
    organizationId: string;
    userId: string;
    role: string;
    status: "active" | "invited";
  },
): Promise<void> {
  await db.query(
    "INSERT INTO memberships (id, organization_id, user_id, role, status) VALUES ($1, $2, $3, $4, $5)",
    [membership.id, membership.organizationId, membership.userId, membership.role, membership.status],
  );
}

export async function activateMembership(db: Queryable, membershipId: string): Promise<void> {
  await db.query(
    `UPDATE memberships SET status = 'active', updated_at = date_trunc('milliseconds', clock_timestamp())
     WHERE id = $1`,
    [membershipId],
  );
}

/** A user's active memberships, oldest first. */
export async function activeMemberships(
  db: Queryable,
  userId: string,
): Promise<Array<{ organization_id: string; role: string }>> {
  const memberships = await db.query<{ organization_id: string; role: string }>(
    `SELECT organization_id, role FROM memberships WHERE user_id = $1 AND status = 'active'
     ORDER BY created_at, id`,
    [userId],
  );
  return memberships.rows;
}

/** A session by its access token, with its user's email. */
export async function findSession(db: Queryable, accessToken: string) {
  const found = await db.query<{
    user_id: string;
    email: string;
    active_organization_id: string | null;
    expires_at: Date;
    expired: boolean;
    revoked: boolean;
  }>(
    `SELECT s.user_id, u.email, s.active_organization_id, s.expires_at,
            s.expires_at <= clock_timestamp() AS expired, s.revoked_at IS NOT NULL AS revoked
     FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`,
    [sha256(accessToken)],
  );
  return found.rows[0];
}

/** Revokes the session of an access token (logout). */
export async function revokeSession(db: Queryable, accessToken: string): Promise<void> {
  await db.query(
    "UPDATE sessions SET revoked_at = clock_timestamp() WHERE token_hash = $1 AND revoked_at IS NULL",
    [sha256(accessToken)],
  );
}

/** Revokes every open session of a user; how many. */
export async function revokeUserSessions(db: Queryable, userId: string): Promise<number> {
  const revoked = await db.query(
    "UPDATE sessions SET revoked_at = clock_timestamp() WHERE user_id = $1 AND revoked_at IS NULL",
    [userId],
  );
  return revoked.rowCount ?? 0;
}

/** Makes an organization the session's active one, if the user is an active member; whether it did. */
export async function switchActiveOrganization(
  db: Queryable,
  accessToken: string,
  organizationId: string,
): Promise<boolean> {
  const updated = await db.query(
    `UPDATE sessions s SET active_organization_id = $2
     WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND EXISTS (
       SELECT 1 FROM memberships m WHERE m.user_id = s.user_id AND m.organization_id = $2 AND m.status = 'active')`,
    [sha256(accessToken), organizationId],
  );
  return (updated.rowCount ?? 0) > 0;
}

/** The invitation a token names with its membership (`lock`: held for the transaction). */
export async function findInvitation(db: Queryable, token: string, lock: boolean) {
  const found = await db.query<{
    id: string;
    membership_id: string;
    usable: boolean;
    organization_id: string;
    user_id: string;
    role: string;
  }>(
    `SELECT i.id, i.membership_id, i.used_at IS NULL AND i.expires_at > clock_timestamp() AS usable,
            m.organization_id, m.user_id, m.role
     FROM invitations i JOIN memberships m ON m.id = i.membership_id
     WHERE i.token_hash = $1${lock ? " FOR UPDATE OF i" : ""}`,
    [sha256(token)],
  );
  return found.rows[0];
}

export async function useInvitation(db: Queryable, invitationId: string): Promise<void> {
  await db.query("UPDATE invitations SET used_at = clock_timestamp() WHERE id = $1", [invitationId]);
}

/** The password reset a token names (`lock`: held for the transaction). */
export async function findPasswordReset(db: Queryable, token: string, lock: boolean) {
  const found = await db.query<{ id: string; user_id: string; usable: boolean }>(
    `SELECT id, user_id, used_at IS NULL AND expires_at > clock_timestamp() AS usable
     FROM password_resets WHERE token_hash = $1${lock ? " FOR UPDATE" : ""}`,
    [sha256(token)],
  );
  return found.rows[0];
}

export async function usePasswordReset(db: Queryable, resetId: string): Promise<void> {
  await db.query("UPDATE password_resets SET used_at = clock_timestamp() WHERE id = $1", [resetId]);
}
