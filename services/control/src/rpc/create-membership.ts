import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AppError,
  isRole,
  isUuid,
  newId,
  notFound,
  ROLES,
  requestContext,
  withTransaction,
} from "@evalp/kit";
import {
  type CreateMembershipRequest,
  type CreateMembershipResponse,
  CreateMembershipResponseSchema,
} from "@evalp/proto/control/v1/membership";
import { writeAudit } from "../db/audit.js";
import { emitToOrganization } from "../db/events.js";
import { activeRole, findMembership, membershipMessage } from "../db/membership-rows.js";
import { findOrganization } from "../db/organizations.js";
import { createInvitation } from "../db/tokens.js";
import { isUniqueViolation } from "../db/unique.js";
import { ensureUser, findUserById, insertMembership } from "../db/users.js";
import type { Deps } from "../deps.js";
import { invitationMail } from "../invitation-mail.js";

/**
 * Invites a person into the organization: a membership `invited` and a 7-day invitation mailed,
 * whether or not the email already has an account (an account without a password is created for
 * a new one). Nobody joins without accepting, and an existing account accepts with its own
 * password (accept-invitation.ts). Both cases take the same path and answer the same, so that the
 * answer never tells whether an email has an account. The inviter is a signed-in user of the
 * organization (the gateway refuses API keys) and asks for no role above their own (403).
 */
export function createMembership(deps: Deps) {
  return async (req: CreateMembershipRequest, ctx: HandlerContext): Promise<CreateMembershipResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    if (!isUuid(req.inviterUserId)) throw inviterRefused();
    const context = requestContext(ctx.values);
    try {
      const { membership, invitation } = await withTransaction(deps.pool, async (tx) => {
        const org = await findOrganization(tx, req.organizationId);
        if (!org) throw notFound("organization");
        const inviterRole = await activeRole(tx, req.inviterUserId, req.organizationId);
        if (!inviterRole || !isRole(inviterRole)) throw inviterRefused();
        if (!isRole(req.role) || ROLES.indexOf(req.role) < ROLES.indexOf(inviterRole)) {
          throw new AppError("forbidden", `You cannot invite someone as ${req.role}, above your own role.`, {
            reason: "role_above_inviter",
            role: req.role,
            inviter_role: inviterRole,
          });
        }
        const inviter = await findUserById(tx, req.inviterUserId);
        const { id: userId } = await ensureUser(tx, req.email);
        const membershipId = newId();
        await insertMembership(tx, {
          id: membershipId,
          organizationId: req.organizationId,
          userId,
          role: req.role,
          status: "invited",
        });
        const token = await createInvitation(tx, membershipId);
        const row = await findMembership(tx, membershipId);
        // Whether the email had an account is not recorded either: the audit log is readable by
        // the organization's admins, the very people the answer must not tell.
        await writeAudit(tx, context, {
          organizationId: req.organizationId,
          action: "membership.created",
          resourceType: "membership",
          resourceId: membershipId,
          metadata: { user_id: userId, role: req.role, status: row.status, invited: true },
        });
        await emitToOrganization(tx, req.organizationId, "membership.created", {
          membership_id: membershipId,
          organization_id: req.organizationId,
          user_id: userId,
          role: req.role,
          status: row.status,
        });
        return {
          membership: row,
          invitation: { token, organization: org.name, inviter: inviter?.email ?? null },
        };
      });
      // Mailed after the commit, so a rolled-back membership never sends one.
      await deps.mailer.send(
        invitationMail({
          to: req.email,
          organization: invitation.organization,
          inviter: invitation.inviter,
          role: req.role,
          link: `${deps.config.PUBLIC_URL}/accept-invitation?token=${invitation.token}`,
        }),
      );
      // The email as asked, not as an existing account spells it (another case would tell that
      // the account exists).
      return create(CreateMembershipResponseSchema, {
        membership: membershipMessage({ ...membership, email: req.email }),
      });
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

/** An inviter who is no active member of the organization (a membership revoked meanwhile). */
function inviterRefused(): AppError {
  return new AppError("forbidden", "Only a signed-in member of the organization can invite.", {
    reason: "session_required",
  });
}
