import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { Page, PageQuery, ref, Uuid } from "../schemas.js";
import { deliveryRef } from "./paths.js";
import { WEBHOOKS } from "./plane.js";
import {
  DELIVERY_STATUSES,
  deliveryJson,
  deliveryWithAttemptsJson,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
} from "./wire.js";

/** `ENV/webhook-deliveries`: #13 list (by `status`, `endpoint_id`), get with attempts, #14 replay. */
export async function webhookDeliveryRoutes(app: Api<typeof ENV_PREFIX>, deps: RouteDeps): Promise<void> {
  const deliveries = deps.upstreams.webhooks.deliveries;

  route(app, WEBHOOKS, "listWebhookDeliveries", "GET /webhook-deliveries", {
    access: { auth: "operator", scope: "webhooks:read" },
    querystring: Type.Composite([
      PageQuery,
      Type.Object({
        status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
        endpoint_id: Type.Optional(Uuid),
      }),
    ]),
    response: Page(WebhookDelivery, "WebhookDeliveryPage"),
    handler: ({ request, call }) => {
      const { status, endpoint_id } = request.query;
      return pageOf(
        request,
        deps.cursors,
        (page) =>
          deliveries.listDeliveries(
            { environment: environmentRef(request.params), page, status, endpointId: endpoint_id },
            call,
          ),
        deliveryJson,
      );
    },
  });

  route(app, WEBHOOKS, "getWebhookDelivery", "GET /webhook-deliveries/:delivery_id", {
    access: { auth: "operator", scope: "webhooks:read" },
    response: ref(WebhookDeliveryWithAttempts),
    handler: async ({ request, call }) =>
      deliveryWithAttemptsJson((await deliveries.getDelivery(deliveryRef(request.params), call)).delivery),
  });

  route(app, WEBHOOKS, "replayWebhookDelivery", "POST /webhook-deliveries/:delivery_id/replay", {
    access: { auth: "operator", scope: "webhooks:write", idempotency: "required" },
    response: ref(WebhookDelivery),
    handler: async ({ request, call }) =>
      deliveryJson((await deliveries.replayDelivery(deliveryRef(request.params), call)).delivery),
  });
}
