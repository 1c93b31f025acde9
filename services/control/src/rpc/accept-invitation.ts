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
import { activateMembership, findInvitation, findUserById, setPassword, useInvitation } from "../db/users.js";
import type { Deps } from "../deps.js";
import { hashPassword, verifyPassword } from "../passwords.js";

/**
 * Accepts an invitation once and activates the membership. An invitee without an account sets
 * their password with it (and can log in at once); one with an account proves it with its own
 * password, which stays as it is: another password is 401 `invalid_credentials` and the
 * invitation stays usable. A used or expired token is 410 `invitation_expired`.
 */
export function acceptInvitation(deps: Deps) {
  return async (req: AcceptInvitationRequest, ctx: HandlerContext): Promise<AcceptInvitationResponse> => {
    const context = requestContext(ctx.values);
    // The token first: an unknown or spent one costs no password hash (19 MiB and tens of ms).
    const found = await usableInvitation(deps.pool, req.token, false);
    const account = await findUserById(deps.pool, found.user_id);
    // Either way one argon2id run: a verification for an account, a hash for a new password.
    const proven: { hash: string; valid: boolean } | { hash: null; newHash: string } = account?.password_hash
      ? { hash: account.password_hash, valid: await verifyPassword(account.password_hash, req.password) }
      : { hash: null, newHash: await hashPassword(req.password) };
    if ("valid" in proven && !proven.valid) {
      throw new AppError("invalid_credentials", "Accept with the password of your evalp account.");
    }
    return withTransaction(deps.pool, async (tx) => {
      const invitation = await usableInvitation(tx, req.token, true);
      const user = await findUserById(tx, invitation.user_id, true);
      // The account's password as it was verified (a reset or a sign-up meanwhile: try again).
      if ((user?.password_hash ?? null) !== proven.hash) {
        throw new AppError("invalid_credentials", "Accept with the password of your evalp account.");
      }
      await useInvitation(tx, invitation.id);
      if ("newHash" in proven) await setPassword(tx, invitation.user_id, proven.newHash);
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
