import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { withTransaction } from "@evalp/kit";
import {
  type DeleteEndpointRequest,
  type DeleteEndpointResponse,
  DeleteEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { deadLetterWaiting } from "../db/deliveries.js";
import { markDeleted, requireEndpoint } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

/**
 * Deletes an endpoint: it stops counting against the quota and receiving events, its waiting
 * deliveries turn `dead_letter` (`endpoint deleted`), and its deliveries stay readable.
 */
export function deleteEndpoint(deps: Deps) {
  return async (req: DeleteEndpointRequest, ctx: HandlerContext): Promise<DeleteEndpointResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    await withTransaction(deps.pool, async (tx) => {
      await requireEndpoint(tx, environmentId, req.endpointId, true);
      await markDeleted(tx, req.endpointId);
      await deadLetterWaiting(tx, req.endpointId, "endpoint deleted");
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.deleted",
        resourceType: "webhook_endpoint",
        resourceId: req.endpointId,
      });
    });
    return create(DeleteEndpointResponseSchema, {});
  };
}
