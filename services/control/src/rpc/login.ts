import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { type LoginRequest, type LoginResponse, LoginResponseSchema } from "@evalp/proto/control/v1/auth";
import { openSession } from "../db/sessions.js";
import { activeMemberships, findUserByEmail } from "../db/users.js";
import type { Deps } from "../deps.js";
import { verifyPassword } from "../passwords.js";

/** Exchanges email and password for an access token; the same answer for a wrong email or password. */
export function login(deps: Deps) {
  return async (req: LoginRequest): Promise<LoginResponse> => {
    const user = await findUserByEmail(deps.pool, req.email);
    const valid = await verifyPassword(user?.password_hash, req.password);
    if (!user || !valid) throw new AppError("invalid_credentials", "Wrong email or password.");
    // The session starts in the organization the user joined first.
    const [first] = await activeMemberships(deps.pool, user.id);
    const session = await openSession(deps.pool, user.id, first?.organization_id ?? null);
    return create(LoginResponseSchema, {
      accessToken: session.token,
      expiresAt: timestampFromDate(session.expiresAt),
    });
  };
}
