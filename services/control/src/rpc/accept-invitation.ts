import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, notFound, type Queryable, requestContext, withTransaction } from "@evalp/kit";
import {
  type AcceptInvitationRequest,
  type AcceptInvitationResponse,
  AcceptInvitationResponseSchema,
} from "@evalp/proto/control/v1/membership";
import { sha256 } from "../credentials.js";
import { writeAudit } from "../db/audit.js";
import { emitToOrganization } from "../db/events.js";
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
      await tx.query("UPDATE invitations SET used_at = clock_timestamp() WHERE id = $1", [invitation.id]);
      await tx.query("UPDATE users SET password_hash = $2, updated_at = clock_timestamp() WHERE id = $1", [
        invitation.user_id,
        passwordHash,
      ]);
      await tx.query(
        `UPDATE memberships SET status = 'active', updated_at = date_trunc('milliseconds', clock_timestamp())
         WHERE id = $1`,
        [invitation.membership_id],
      );
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
  const invitation = found.rows[0];
  if (!invitation) throw notFound("invitation");
  if (!invitation.usable)
    throw new AppError("invitation_expired", "This invitation was already used or has expired.");
  return invitation;
}
