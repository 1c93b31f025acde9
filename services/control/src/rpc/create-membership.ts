import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, isUuid, newId, notFound, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateMembershipRequest,
  type CreateMembershipResponse,
  CreateMembershipResponseSchema,
} from "@evalp/proto/control/v1/membership";
import { writeAudit } from "../db/audit.js";
import { emitToOrganization } from "../db/events.js";
import { MEMBERSHIP_SELECT, type MembershipRow, membershipMessage } from "../db/membership-rows.js";
import { createInvitation } from "../db/tokens.js";
import { isUniqueViolation } from "../db/unique.js";
import type { Deps } from "../deps.js";

/**
 * Adds a person to the organization. Someone without an account is created as a user with no
 * password and mailed a 7-day invitation; a user who already has an account is a member at once.
 */
export function createMembership(deps: Deps) {
  return async (req: CreateMembershipRequest, ctx: HandlerContext): Promise<CreateMembershipResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const context = requestContext(ctx.values);
    try {
      const { membership, invitation } = await withTransaction(deps.pool, async (tx) => {
        const org = await tx.query<{ name: string }>("SELECT name FROM organizations WHERE id = $1", [
          req.organizationId,
        ]);
        if (!org.rows[0]) throw notFound("organization");
        await tx.query(
          "INSERT INTO users (id, email) VALUES ($1, $2) ON CONFLICT (lower(email)) DO NOTHING",
          [newId(), req.email],
        );
        const user = await tx.query<{ id: string; active: boolean }>(
          "SELECT id, password_hash IS NOT NULL AS active FROM users WHERE lower(email) = lower($1)",
          [req.email],
        );
        const { id: userId, active } = user.rows[0] as { id: string; active: boolean };
        const membershipId = newId();
        await tx.query(
          `INSERT INTO memberships (id, organization_id, user_id, role, status) VALUES ($1, $2, $3, $4, $5)`,
          [membershipId, req.organizationId, userId, req.role, active ? "active" : "invited"],
        );
        const token = active ? null : await createInvitation(tx, membershipId);
        const row = (await tx.query<MembershipRow>(`${MEMBERSHIP_SELECT} WHERE m.id = $1`, [membershipId]))
          .rows[0] as MembershipRow;
        await writeAudit(tx, context, {
          organizationId: req.organizationId,
          action: "membership.created",
          resourceType: "membership",
          resourceId: membershipId,
          metadata: { user_id: userId, role: req.role, status: row.status, invited: !active },
        });
        await emitToOrganization(tx, req.organizationId, "membership.created", {
          membership_id: membershipId,
          organization_id: req.organizationId,
          user_id: userId,
          role: req.role,
          status: row.status,
        });
        return { membership: row, invitation: token && { token, organization: org.rows[0].name } };
      });
      if (invitation) {
        // Mailed after the commit, so a rolled-back membership never sends one.
        await deps.mailer.send({
          to: req.email,
          subject: `You are invited to ${invitation.organization} on evalp`,
          text:
            `You have been invited to join ${invitation.organization} as ${req.role}.\n\n` +
            `Accept within 7 days: ${deps.config.PUBLIC_URL}/accept-invitation?token=${invitation.token}\n`,
        });
      }
      return create(CreateMembershipResponseSchema, { membership: membershipMessage(membership) });
    } catch (error) {
      if (isUniqueViolation(error, "memberships_organization_id_user_id_key")) {
        throw new AppError("already_exists", "This person is already a member.", {
          resource: "membership",
          field: "email",
        });
      }
      throw error;
    }
  };
}
