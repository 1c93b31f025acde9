import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, notFound, requestContext, withTransaction } from "@evalp/kit";
import {
  type RevokeApiKeyRequest,
  type RevokeApiKeyResponse,
  RevokeApiKeyResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { writeAudit } from "../db/audit.js";
import { API_KEY_COLUMNS, type ApiKeyRow, apiKeyMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/**
 * Revokes a key at once. Revoking a revoked key keeps its first `revoked_at` and answers the
 * same summary, so a retried revoke is harmless.
 */
export function revokeApiKey(deps: Deps) {
  return async (req: RevokeApiKeyRequest, ctx: HandlerContext): Promise<RevokeApiKeyResponse> => {
    const context = requestContext(ctx.values);
    if (!isUuid(req.keyId)) throw notFound("api_key");
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEnvironment(tx, req.environment);
      const updated = await tx.query<ApiKeyRow & { already: boolean }>(
        `WITH before AS (SELECT revoked_at FROM api_keys WHERE id = $1 AND environment_id = $2)
         UPDATE api_keys SET revoked_at = COALESCE(revoked_at, date_trunc('milliseconds', clock_timestamp()))
         WHERE id = $1 AND environment_id = $2
         RETURNING ${API_KEY_COLUMNS}, (SELECT revoked_at IS NOT NULL FROM before) AS already`,
        [req.keyId, req.environment?.environmentId],
      );
      const key = updated.rows[0];
      if (!key) throw notFound("api_key");
      // Only the revocation that took effect is audited; a repeated revoke changes nothing.
      if (!key.already) {
        await writeAudit(tx, context, {
          organizationId: req.environment?.organizationId ?? "",
          appId: req.environment?.appId,
          environmentId: key.environment_id,
          action: "api_key.revoked",
          resourceType: "api_key",
          resourceId: key.id,
          metadata: { name: key.name, key_prefix: key.key_prefix },
        });
      }
      return key;
    });
    return create(RevokeApiKeyResponseSchema, { apiKey: apiKeyMessage(row) });
  };
}
