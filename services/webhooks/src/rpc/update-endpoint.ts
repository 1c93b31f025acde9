import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { withTransaction } from "@evalp/kit";
import {
  type UpdateEndpointRequest,
  type UpdateEndpointResponse,
  UpdateEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { ENDPOINT_COLUMNS, type EndpointRow, endpointMessage, requireEndpoint } from "../db/endpoints.js";
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
    const environmentId = await deps.requireEnvironment(req.environment, ctx);
    if (req.url !== undefined) await requireTarget(deps, req.url);
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEndpoint(tx, environmentId, req.endpointId, true);
      await tx.query(
        `UPDATE webhook_endpoints
         SET url = COALESCE($2, url), event_types = CASE WHEN $3 THEN $4::text[] ELSE event_types END,
             updated_at = clock_timestamp()
         WHERE id = $1`,
        [req.endpointId, req.url ?? null, req.setEventTypes, eventTypesOf(req.eventTypes)],
      );
      if (req.enabled === false) await disableEndpoint(tx, req.endpointId, "requested");
      if (req.enabled === true) {
        await tx.query(
          `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL,
             updated_at = clock_timestamp()
           WHERE id = $1 AND disabled_at IS NOT NULL`,
          [req.endpointId],
        );
      }
      const updated = await tx.query<EndpointRow>(
        `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1`,
        [req.endpointId],
      );
      const endpoint = updated.rows[0] as EndpointRow;
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
