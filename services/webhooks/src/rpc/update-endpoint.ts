import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { withTransaction } from "@evalp/kit";
import {
  type UpdateEndpointRequest,
  type UpdateEndpointResponse,
  UpdateEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import {
  endpointMessage,
  endpointRow,
  markEnabled,
  requireEndpoint,
  updateEndpointTarget,
} from "../db/endpoints.js";
import type { Deps } from "../deps.js";
import { disableEndpoint } from "../disable.js";
import { eventTypesOf, requireTarget } from "../target.js";

/**
 * `PATCH ENV/webhooks/{id}`: the fields given change. Disabling sets `disabled_at` and turns the
 * endpoint's waiting deliveries `dead_letter` (`endpoint disabled`); enabling clears it and starts
 * its failure count afresh. Its dead letters stay dead (recover re-queues them).
 */
export function updateEndpoint(deps: Deps) {
  return async (req: UpdateEndpointRequest, ctx: HandlerContext): Promise<UpdateEndpointResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    if (req.url !== undefined) await requireTarget(deps, req.url);
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEndpoint(tx, environmentId, req.endpointId, true);
      await updateEndpointTarget(tx, req.endpointId, {
        url: req.url ?? null,
        setEventTypes: req.setEventTypes,
        eventTypes: eventTypesOf(req.eventTypes),
      });
      if (req.enabled === false) await disableEndpoint(tx, req.endpointId, "requested");
      if (req.enabled === true) await markEnabled(tx, req.endpointId);
      const endpoint = await endpointRow(tx, req.endpointId);
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.updated",
        resourceType: "webhook_endpoint",
        resourceId: endpoint.id,
        metadata: {
          url: endpoint.url,
          event_types: endpoint.event_types,
          enabled: endpoint.disabled_at === null,
        },
      });
      return endpoint;
    });
    return create(UpdateEndpointResponseSchema, { endpoint: endpointMessage(row) });
  };
}
