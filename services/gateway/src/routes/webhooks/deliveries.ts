import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { byPath, route } from "../index.js";
import { type ENV_PREFIX, environmentRef, pageOfItems, pageQuery, ref, Uuid } from "../wire.js";
import { READ, type WebhooksApi, WRITE } from "./index.js";
import {
  DELIVERY_STATUSES,
  deliveryJson,
  deliveryRef,
  deliveryWithAttemptsJson,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
} from "./wire.js";

/** `ENV/webhook-deliveries`: #13 list (by `status`, `endpoint_id`, `event_type`), get with attempts, #14 replay. */
export function webhookDeliveryRoutes(app: WebhooksApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const { deliveries } = deps.upstreams.webhooks;
  route(app, "listWebhookDeliveries", "GET /webhook-deliveries", READ, {
    query: pageQuery({
      status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
      endpoint_id: Type.Optional(Uuid),
      event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    }),
    answer: pageOfItems(WebhookDelivery),
    list: ({ params, query }, page, call) =>
      deliveries.listDeliveries(
        {
          environment: environmentRef(params),
          page,
          status: query.status,
          endpointId: query.endpoint_id,
          eventType: query.event_type,
        },
        call,
      ),
    item: deliveryJson,
  });

  route(app, "getWebhookDelivery", "GET /webhook-deliveries/:delivery_id", READ, {
    answer: ref(WebhookDeliveryWithAttempts),
    ...byPath(deliveries.getDelivery, deliveryRef, (answer) => deliveryWithAttemptsJson(answer.delivery)),
  });

  route(app, "replayWebhookDelivery", "POST /webhook-deliveries/:delivery_id/replay", WRITE, {
    answer: ref(WebhookDelivery),
    handler: async ({ request, call }) =>
      deliveryJson((await deliveries.replayDelivery(deliveryRef(request.params), call)).delivery),
  });
}
