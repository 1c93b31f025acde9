import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { withTransaction } from "@evalp/kit";
import {
  type RotateSecretRequest,
  type RotateSecretResponse,
  RotateSecretResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { endpointMessage, requireEndpoint, rotateEndpointSecret } from "../db/endpoints.js";
import type { Deps } from "../deps.js";
import { generateSecret, ROTATION_OVERLAP_MS } from "../secrets.js";

/**
 * A new secret for the endpoint, in this response only (stored sealed). The secret it replaces keeps signing
 * beside it for 24 h, so receivers can switch without missing a delivery; a second rotation
 * within that time drops the oldest.
 */
export function rotateSecret(deps: Deps) {
  return async (req: RotateSecretRequest, ctx: HandlerContext): Promise<RotateSecretResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    const secret = generateSecret();
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEndpoint(tx, environmentId, req.endpointId, true);
      const sealed = deps.sealer.seal(req.endpointId, secret);
      const updated = await rotateEndpointSecret(tx, req.endpointId, sealed, ROTATION_OVERLAP_MS);
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.secret_rotated",
        resourceType: "webhook_endpoint",
        resourceId: req.endpointId,
      });
      return updated;
    });
    return create(RotateSecretResponseSchema, { endpoint: endpointMessage(row), secret });
  };
}
