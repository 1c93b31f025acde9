import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import { type Membership, MembershipSchema } from "@evalp/proto/control/v1/membership";

export type MembershipRow = {
  id: string;
  organization_id: string;
  user_id: string;
  role: string;
  status: string;
  email: string;
  created_at: Date;
  updated_at: Date;
};

/** Memberships joined with their user's email, as listed. */
export const MEMBERSHIP_SELECT = `SELECT m.id, m.organization_id, m.user_id, m.role, m.status, u.email, m.created_at,
  m.updated_at FROM memberships m JOIN users u ON u.id = m.user_id`;

export function membershipMessage(row: MembershipRow): Membership {
  return create(MembershipSchema, {
    id: row.id,
    organizationId: row.organization_id,
    userId: row.user_id,
    role: row.role,
    status: row.status,
    email: row.email,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

/** A page of an organization's memberships, newest first. */
export async function listMembershipRows(
  db: Queryable,
  organizationId: string,
  page: PageRequest | undefined,
): Promise<MembershipRow[]> {
  const clause = pageClause(page, 2, "m.");
  const found = await db.query<MembershipRow>(
    `${MEMBERSHIP_SELECT} WHERE m.organization_id = $1 AND ${clause.where} ${clause.tail}`,
    [organizationId, ...clause.params],
  );
  return found.rows;
}

/** The role of a user's active membership of the organization, if any. */
export async function activeRole(
  db: Queryable,
  userId: string,
  organizationId: string,
): Promise<string | undefined> {
  const found = await db.query<{ role: string }>(
    "SELECT role FROM memberships WHERE user_id = $1 AND organization_id = $2 AND status = 'active'",
    [userId, organizationId],
  );
  return found.rows[0]?.role;
}

/** A membership with its user's email. */
export async function findMembership(db: Queryable, membershipId: string): Promise<MembershipRow> {
  const found = await db.query<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = $1`, [membershipId]);
  return found.rows[0] as MembershipRow;
}
