import { notFound, type Queryable } from "@evalp/kit";
import { sha256 } from "../credentials.js";

/**
 * The organization a session acts in: the one it chose if still a member there, else the
 * first organization the user joined. Null for a user who belongs to none.
 */
export async function activeOrganization(db: Queryable, accessToken: string): Promise<string | null> {
  const found = await db.query<{ organization_id: string | null }>(
    `SELECT COALESCE(
       (SELECT m.organization_id FROM memberships m WHERE m.user_id = s.user_id
          AND m.organization_id = s.active_organization_id AND m.status = 'active'),
       (SELECT m.organization_id FROM memberships m WHERE m.user_id = s.user_id AND m.status = 'active'
          ORDER BY m.created_at, m.id LIMIT 1)) AS organization_id
     FROM sessions s WHERE s.token_hash = $1 AND s.revoked_at IS NULL`,
    [sha256(accessToken)],
  );
  const row = found.rows[0];
  if (!row) throw notFound("session");
  return row.organization_id;
}

/** The organizations the session's user is an active member of, in the order they joined them. */
export async function sessionOrganizations(
  db: Queryable,
  accessToken: string,
): Promise<{ organization_id: string; name: string; role: string }[]> {
  const found = await db.query<{ organization_id: string; name: string; role: string }>(
    `SELECT o.id AS organization_id, o.name, m.role
     FROM sessions s
     JOIN memberships m ON m.user_id = s.user_id AND m.status = 'active'
     JOIN organizations o ON o.id = m.organization_id
     WHERE s.token_hash = $1 AND s.revoked_at IS NULL
     ORDER BY m.created_at, m.id`,
    [sha256(accessToken)],
  );
  return found.rows;
}
