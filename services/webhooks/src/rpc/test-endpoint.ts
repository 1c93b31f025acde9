import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { currentTraceCarrier, newId, withTransaction } from "@evalp/kit";
import {
  type TestEndpointRequest,
  type TestEndpointResponse,
  TestEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { deliveryMessage, insertDelivery } from "../db/deliveries.js";
import { requireEndpoint } from "../db/endpoints.js";
import { insertEvents } from "../db/events.js";
import type { Deps } from "../deps.js";

/**
 * `POST ENV/webhooks/{id}/test`: a `webhook.test` event for this endpoint alone (whatever its
 * event types), delivered like any other and attempted at once. Answers the delivery, `pending`.
 */
export function testEndpoint(deps: Deps) {
  return async (req: TestEndpointRequest, ctx: HandlerContext): Promise<TestEndpointResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEndpoint(tx, environmentId, req.endpointId);
      const event = {
        id: newId(),
        type: "webhook.test",
        timestamp: new Date().toISOString(),
        environment_id: environmentId,
        data: { endpoint_id: req.endpointId },
      };
      await insertEvents(tx, [event]);
      const delivery = await insertDelivery(tx, {
        id: newId(),
        environmentId,
        endpointId: req.endpointId,
        eventId: event.id,
        eventType: event.type,
        // Its attempt continues the trace of the call that asked for it.
        traceContext: currentTraceCarrier(),
      });
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
