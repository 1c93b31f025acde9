import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, grants, isScope, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateApiKeyRequest,
  type CreateApiKeyResponse,
  CreateApiKeyResponseSchema,
} from "@evalp/proto/control/v1/api_key";
import { actorScopes } from "../actor-scopes.js";
import { newApiKey } from "../credentials.js";
import { writeAudit } from "../db/audit.js";
import { insertApiKey } from "../db/organizations.js";
import { apiKeyMessage } from "../db/rows.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/**
 * Issues a key for the environment. The whole key is in this response only; only its hash is
 * kept. Its scopes are within the actor's (docs/authentication.md), checked here against what control knows.
 */
export function createApiKey(deps: Deps) {
  return async (req: CreateApiKeyRequest, ctx: HandlerContext): Promise<CreateApiKeyResponse> => {
    const context = requestContext(ctx.values);
    const key = newApiKey();
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEnvironment(tx, req.environment);
      // The gateway checked this too; control does not take a caller's word for it.
      const held = await actorScopes(tx, context.actor, {
        organizationId: req.environment?.organizationId ?? "",
        environmentId: req.environment?.environmentId ?? "",
      });
      const missing = req.scopes.find((scope) => !isScope(scope) || !grants(held, scope));
      if (missing) {
        throw new AppError("forbidden", `A key cannot have ${missing}, which its creator lacks.`, {
          required_scope: missing,
        });
      }
      const created = await insertApiKey(tx, {
        environmentId: req.environment?.environmentId,
        name: req.name,
        prefix: key.prefix,
        secret: key.secret,
        scopes: req.scopes,
        createdByUserId: req.createdByUserId ?? null,
      });
      await writeAudit(tx, context, {
        organizationId: req.environment?.organizationId ?? "",
        appId: req.environment?.appId,
        environmentId: created.environment_id,
        action: "api_key.created",
        resourceType: "api_key",
        resourceId: created.id,
        metadata: { name: created.name, key_prefix: created.key_prefix, scopes: created.scopes },
      });
      return created;
    });
    return create(CreateApiKeyResponseSchema, { apiKey: apiKeyMessage(row), secret: key.secret });
  };
}
