import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, notFound, requestContext, withTransaction } from "@evalp/kit";
import {
  type RevokeApiKeyRequest,
  type RevokeApiKeyResponse,
  RevokeApiKeyResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { writeAudit } from "../db/audit.js";
import { revokeApiKeyRow } from "../db/organizations.js";
import { apiKeyMessage } from "../db/rows.js";
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
      const key = await revokeApiKeyRow(tx, req.keyId, req.environment?.environmentId);
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
