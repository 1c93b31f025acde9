import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, notFound, type Queryable, requestContext, withTransaction } from "@evalp/kit";
import {
  type AcceptInvitationRequest,
  type AcceptInvitationResponse,
  AcceptInvitationResponseSchema,
} from "@evalp/proto/control/v1/membership";
import { writeAudit } from "../db/audit.js";
import { emitToOrganization } from "../db/events.js";
import { activateMembership, findInvitation, setPassword, useInvitation } from "../db/users.js";
import type { Deps } from "../deps.js";
import { hashPassword } from "../passwords.js";

/**
 * Accepts an invitation once: sets the invitee's password and activates the membership, so the
 * invitee can log in at once. A used or expired token is 410 `invitation_expired`.
 */
export function acceptInvitation(deps: Deps) {
  return async (req: AcceptInvitationRequest, ctx: HandlerContext): Promise<AcceptInvitationResponse> => {
    const context = requestContext(ctx.values);
    // The token first: an unknown or spent one costs no password hash (19 MiB and tens of ms).
    await usableInvitation(deps.pool, req.token, false);
    const passwordHash = await hashPassword(req.password);
    return withTransaction(deps.pool, async (tx) => {
      const invitation = await usableInvitation(tx, req.token, true);
      await useInvitation(tx, invitation.id);
      await setPassword(tx, invitation.user_id, passwordHash);
      await activateMembership(tx, invitation.membership_id);
      await writeAudit(tx, context, {
        organizationId: invitation.organization_id,
        action: "invitation.accepted",
        resourceType: "membership",
        resourceId: invitation.membership_id,
        metadata: { user_id: invitation.user_id, role: invitation.role },
        actor: { kind: "user", id: invitation.user_id },
      });
      await emitToOrganization(tx, invitation.organization_id, "invitation.accepted", {
        membership_id: invitation.membership_id,
        organization_id: invitation.organization_id,
        user_id: invitation.user_id,
        role: invitation.role,
      });
      return create(AcceptInvitationResponseSchema, {
        membershipId: invitation.membership_id,
        organizationId: invitation.organization_id,
        role: invitation.role,
        userId: invitation.user_id,
      });
    });
  };
}

/** The invitation a token names with its membership, if it can still be used (`lock`: held for the transaction). */
async function usableInvitation(db: Queryable, token: string, lock: boolean) {
  const invitation = await findInvitation(db, token, lock);
  if (!invitation) throw notFound("invitation");
  if (!invitation.usable)
    throw new AppError("invitation_expired", "This invitation was already used or has expired.");
  return invitation;
}
