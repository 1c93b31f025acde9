import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, notFound, type Queryable, requestContext, withTransaction } from "@evalp/kit";
import {
  type ConfirmPasswordResetRequest,
  type ConfirmPasswordResetResponse,
  ConfirmPasswordResetResponseSchema,
} from "@evalp/proto/control/v1/auth";
import { writeAudit } from "../db/audit.js";
import {
  activeMemberships,
  findPasswordReset,
  revokeUserSessions,
  setPassword,
  usePasswordReset,
} from "../db/users.js";
import type { Deps } from "../deps.js";
import { hashPassword } from "../passwords.js";

/**
 * Sets a new password with a reset token (single use, 1 hour) and revokes every session of the
 * user, so whoever held the old password is logged out everywhere.
 */
export function confirmPasswordReset(deps: Deps) {
  return async (
    req: ConfirmPasswordResetRequest,
    ctx: HandlerContext,
  ): Promise<ConfirmPasswordResetResponse> => {
    const context = requestContext(ctx.values);
    // The token first: an unknown or spent one costs no password hash (19 MiB and tens of ms).
    await usableReset(deps.pool, req.token, false);
    const passwordHash = await hashPassword(req.password);
    await withTransaction(deps.pool, async (tx) => {
      const reset = await usableReset(tx, req.token, true);
      await usePasswordReset(tx, reset.id);
      await setPassword(tx, reset.user_id, passwordHash);
      const revoked = await revokeUserSessions(tx, reset.user_id);
      const organizations = await activeMemberships(tx, reset.user_id);
      // The reset is audited in every organization the user acts in.
      for (const { organization_id } of organizations) {
        await writeAudit(tx, context, {
          organizationId: organization_id,
          action: "user.password_reset",
          resourceType: "user",
          resourceId: reset.user_id,
          metadata: { sessions_revoked: revoked },
          actor: { kind: "user", id: reset.user_id },
        });
      }
    });
    return create(ConfirmPasswordResetResponseSchema, {});
  };
}

/** The reset a token names, if it can still be used (`lock`: held for the transaction). */
async function usableReset(db: Queryable, token: string, lock: boolean) {
  const reset = await findPasswordReset(db, token, lock);
  if (!reset) throw notFound("reset_token");
  if (!reset.usable)
    throw new AppError("reset_token_expired", "This reset link was already used or has expired.");
  return reset;
}
