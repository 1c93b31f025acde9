import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, newId, requestContext, withTransaction } from "@evalp/kit";
import { type SignupRequest, type SignupResponse, SignupResponseSchema } from "@evalp/proto/control/v1/auth";
import { writeAudit } from "../db/audit.js";
import { insertOrganization } from "../db/organizations.js";
import { openSession } from "../db/sessions.js";
import { isUniqueViolation } from "../db/unique.js";
import { insertMembership, insertUser } from "../db/users.js";
import type { Deps } from "../deps.js";
import { hashPassword } from "../passwords.js";

/** A new user, their organization (they own it) and a first session, in one transaction. */
export function signup(deps: Deps) {
  return async (req: SignupRequest, ctx: HandlerContext): Promise<SignupResponse> => {
    const context = requestContext(ctx.values);
    const passwordHash = await hashPassword(req.password);
    const userId = newId();
    const organizationId = newId();
    try {
      return await withTransaction(deps.pool, async (tx) => {
        await insertUser(tx, { id: userId, email: req.email, passwordHash });
        await insertOrganization(tx, organizationId, req.organizationName);
        await insertMembership(tx, { id: newId(), organizationId, userId, role: "owner", status: "active" });
        await writeAudit(tx, context, {
          organizationId,
          action: "organization.created",
          resourceType: "organization",
          resourceId: organizationId,
          metadata: { name: req.organizationName, signup: true },
          actor: { kind: "user", id: userId },
        });
        const session = await openSession(tx, userId, organizationId);
        return create(SignupResponseSchema, {
          userId,
          organizationId,
          accessToken: session.token,
          expiresAt: timestampFromDate(session.expiresAt),
        });
      });
    } catch (error) {
      if (isUniqueViolation(error, "users_email_key")) {
        throw new AppError("already_exists", "An account with this email already exists.", {
          resource: "user",
          field: "email",
        });
      }
      throw error;
    }
  };
}
