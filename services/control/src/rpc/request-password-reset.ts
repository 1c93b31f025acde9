import { create } from "@bufbuild/protobuf";
import {
  type RequestPasswordResetRequest,
  type RequestPasswordResetResponse,
  RequestPasswordResetResponseSchema,
} from "@evalp/proto/control/v1/auth";
import { createPasswordReset } from "../db/tokens.js";
import { findUserByEmail } from "../db/users.js";
import type { Deps } from "../deps.js";

/**
 * Accepts a reset request at once and does the work afterwards, so the answer takes the same
 * time whether or not the email belongs to anyone (no enumeration, not even by timing).
 */
export function requestPasswordReset(deps: Deps) {
  return async (req: RequestPasswordResetRequest): Promise<RequestPasswordResetResponse> => {
    deps.tasks.run("password-reset", async () => {
      const user = await findUserByEmail(deps.pool, req.email);
      if (!user) return;
      const token = await createPasswordReset(deps.pool, user.id);
      await deps.mailer.send({
        to: user.email,
        subject: "Reset your evalp password",
        text:
          "Someone asked to reset the password of this account. If it was you, choose a new one " +
          `within an hour: ${deps.config.PUBLIC_URL}/reset-password?token=${token}\n\n` +
          "If it was not you, ignore this message; your password stays as it is.\n",
      });
    });
    return create(RequestPasswordResetResponseSchema, {});
  };
}
