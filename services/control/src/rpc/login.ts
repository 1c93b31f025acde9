import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import { type LoginRequest, type LoginResponse, LoginResponseSchema } from "@evalp/proto/control/v1/auth";
import { openSession } from "../db/sessions.js";
import type { Deps } from "../deps.js";
import { verifyPassword } from "../passwords.js";

/** Exchanges email and password for an access token; the same answer for a wrong email or password. */
export function login(deps: Deps) {
  return async (req: LoginRequest): Promise<LoginResponse> => {
    const found = await deps.pool.query<{ id: string; password_hash: string | null }>(
      "SELECT id, password_hash FROM users WHERE lower(email) = lower($1)",
      [req.email],
    );
    const user = found.rows[0];
    const valid = await verifyPassword(user?.password_hash, req.password);
    if (!user || !valid) throw new AppError("invalid_credentials", "Wrong email or password.");
    // The session starts in the organization the user joined first.
    const org = await deps.pool.query<{ organization_id: string }>(
      `SELECT organization_id FROM memberships WHERE user_id = $1 AND status = 'active'
       ORDER BY created_at, id LIMIT 1`,
      [user.id],
    );
    const session = await openSession(deps.pool, user.id, org.rows[0]?.organization_id ?? null);
    return create(LoginResponseSchema, {
      accessToken: session.token,
      expiresAt: timestampFromDate(session.expiresAt),
    });
  };
}
