import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
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
