import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, withTransaction } from "@evalp/kit";
import {
  type TestEndpointRequest,
  type TestEndpointResponse,
  TestEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { DELIVERY_COLUMNS, type DeliveryRow, deliveryMessage } from "../db/deliveries.js";
import { requireEndpoint } from "../db/endpoints.js";
import type { Deps } from "../deps.js";
import { eventBody } from "../event-body.js";

/**
 * `POST ENV/webhooks/{id}/test`: a `webhook.test` event for this endpoint alone (whatever its
 * event types), delivered like any other and attempted at once. Answers the delivery, `pending`.
 */
export function testEndpoint(deps: Deps) {
  return async (req: TestEndpointRequest, ctx: HandlerContext): Promise<TestEndpointResponse> => {
    const environmentId = await deps.requireEnvironment(req.environment, ctx);
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEndpoint(tx, environmentId, req.endpointId);
      const event = {
        id: newId(),
        type: "webhook.test",
        timestamp: new Date().toISOString(),
        environment_id: environmentId,
        data: { endpoint_id: req.endpointId },
      };
      await tx.query(
        "INSERT INTO webhook_events (id, environment_id, event_type, body, created_at) VALUES ($1, $2, $3, $4, $5)",
        [event.id, environmentId, event.type, eventBody(event), event.timestamp],
      );
      const inserted = await tx.query<DeliveryRow>(
        `INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, next_attempt_at)
         VALUES ($1, $2, $3, $4, $5, now()) RETURNING ${DELIVERY_COLUMNS}`,
        [newId(), environmentId, req.endpointId, event.id, event.type],
      );
      const delivery = inserted.rows[0] as DeliveryRow;
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.tested",
        resourceType: "webhook_endpoint",
        resourceId: req.endpointId,
        metadata: { delivery_id: delivery.id },
      });
      return delivery;
    });
    deps.wake();
    return create(TestEndpointResponseSchema, { delivery: deliveryMessage(row) });
  };
}
