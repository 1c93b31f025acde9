import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { ref, Uuid } from "../schemas.js";
import { WEBHOOKS } from "./plane.js";
import { deliveryRef } from "./requests.js";
import {
  DELIVERY_STATUSES,
  deliveryJson,
  deliveryWithAttemptsJson,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
} from "./wire.js";

/** `ENV/webhook-deliveries`: #13 list (by `status`, `endpoint_id`, `event_type`), get with attempts, #14 replay. */
export async function webhookDeliveryRoutes(app: Api<typeof ENV_PREFIX>, deps: RouteDeps): Promise<void> {
  const { deliveries } = deps.upstreams.webhooks;
  const { filteredList, read } = resources(app, WEBHOOKS, deps.cursors);

  filteredList(
    "listWebhookDeliveries",
    "GET /webhook-deliveries",
    "webhooks:read",
    {
      item: WebhookDelivery,
      filters: {
        status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
        endpoint_id: Type.Optional(Uuid),
        event_type: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      },
      json: deliveryJson,
    },
    ({ params, query }, page, call) =>
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
  );

  read(
    "getWebhookDelivery",
    "GET /webhook-deliveries/:delivery_id",
    "webhooks:read",
    WebhookDeliveryWithAttempts,
    {
      rpc: ({ params }, call) => deliveries.getDelivery(deliveryRef(params), call),
      json: (answer) => deliveryWithAttemptsJson(answer.delivery),
    },
  );

  route(app, WEBHOOKS, "replayWebhookDelivery", "POST /webhook-deliveries/:delivery_id/replay", {
    access: { auth: "operator", scope: "webhooks:write", idempotency: "required" },
    response: ref(WebhookDelivery),
    handler: async ({ request, call }) =>
      deliveryJson((await deliveries.replayDelivery(deliveryRef(request.params), call)).delivery),
  });
}
