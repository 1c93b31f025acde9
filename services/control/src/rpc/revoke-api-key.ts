import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type RevokeApiKeyRequest,
  type RevokeApiKeyResponse,
  RevokeApiKeyResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { API_KEY_COLUMNS, type ApiKeyRow, apiKeyMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/**
 * Revokes a key at once. Revoking a revoked key keeps its first `revoked_at` and answers the
 * same summary, so a retried revoke is harmless.
 */
export function revokeApiKey(deps: Deps) {
  return async (req: RevokeApiKeyRequest): Promise<RevokeApiKeyResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    if (!isUuid(req.keyId)) throw notFound("api_key");
    const updated = await deps.pool.query<ApiKeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, date_trunc('milliseconds', clock_timestamp()))
       WHERE id = $1 AND environment_id = $2 RETURNING ${API_KEY_COLUMNS}`,
      [req.keyId, req.environment?.environmentId],
    );
    const row = updated.rows[0];
    if (!row) throw notFound("api_key");
    return create(RevokeApiKeyResponseSchema, { apiKey: apiKeyMessage(row) });
  };
}
