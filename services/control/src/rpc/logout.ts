import { create } from "@bufbuild/protobuf";
import { type LogoutRequest, type LogoutResponse, LogoutResponseSchema } from "@evalp/proto/control/v1/auth";
import { sha256 } from "../credentials.js";
import type { Deps } from "../deps.js";

/** Revokes the presented access token; revoking an already revoked one is not an error. */
export function logout(deps: Deps) {
  return async (req: LogoutRequest): Promise<LogoutResponse> => {
    await deps.pool.query(
      "UPDATE sessions SET revoked_at = clock_timestamp() WHERE token_hash = $1 AND revoked_at IS NULL",
      [sha256(req.accessToken)],
    );
    return create(LogoutResponseSchema, {});
  };
}
