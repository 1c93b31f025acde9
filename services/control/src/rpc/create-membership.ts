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
import { findMembership, membershipMessage } from "../db/membership-rows.js";
import { findOrganization } from "../db/organizations.js";
import { createInvitation } from "../db/tokens.js";
import { isUniqueViolation } from "../db/unique.js";
import { ensureUser, insertMembership } from "../db/users.js";
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
        const org = await findOrganization(tx, req.organizationId);
        if (!org) throw notFound("organization");
        const { id: userId, active } = await ensureUser(tx, req.email);
        const membershipId = newId();
        await insertMembership(tx, {
          id: membershipId,
          organizationId: req.organizationId,
          userId,
          role: req.role,
          status: active ? "active" : "invited",
        });
        const token = active ? null : await createInvitation(tx, membershipId);
        const row = await findMembership(tx, membershipId);
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
        return { membership: row, invitation: token && { token, organization: org.name } };
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
