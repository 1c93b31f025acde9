import { create } from "@bufbuild/protobuf";
import { type LogoutRequest, type LogoutResponse, LogoutResponseSchema } from "@evalp/proto/control/v1/auth";
import { revokeSession } from "../db/users.js";
import type { Deps } from "../deps.js";

/** Revokes the presented access token; revoking an already revoked one is not an error. */
export function logout(deps: Deps) {
  return async (req: LogoutRequest): Promise<LogoutResponse> => {
    await revokeSession(deps.pool, req.accessToken);
    return create(LogoutResponseSchema, {});
  };
}
