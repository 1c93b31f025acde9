import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, Page, PageQuery, ref, Uuid } from "../schemas.js";
import { WEBHOOKS } from "./plane.js";
import {
  DELIVERY_STATUSES,
  deliveryJson,
  deliveryWithAttemptsJson,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
} from "./wire.js";

const DeliveryParams = Type.Composite([EnvParams, Type.Object({ delivery_id: Type.String() })]);

/** The delivery a path names, as the delivery RPCs take it. */
function deliveryRef(params: EnvPath & { delivery_id: string }) {
  return { environment: environmentRef(params), deliveryId: params.delivery_id };
}

/** `ENV/webhook-deliveries`: #13 list (by `status`, `endpoint_id`), get with attempts, #14 replay. */
export async function webhookDeliveryRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const deliveries = deps.upstreams.webhooks.deliveries;

  route(app, WEBHOOKS, {
    at: "GET /webhook-deliveries",
    operationId: "listWebhookDeliveries",
    access: { auth: "operator", scope: "webhooks:read" },
    params: EnvParams,
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

  route(app, WEBHOOKS, {
    at: "GET /webhook-deliveries/:delivery_id",
    operationId: "getWebhookDelivery",
    access: { auth: "operator", scope: "webhooks:read" },
    params: DeliveryParams,
    response: ref(WebhookDeliveryWithAttempts),
    handler: async ({ request, call }) =>
      deliveryWithAttemptsJson((await deliveries.getDelivery(deliveryRef(request.params), call)).delivery),
  });

  route(app, WEBHOOKS, {
    at: "POST /webhook-deliveries/:delivery_id/replay",
    operationId: "replayWebhookDelivery",
    access: { auth: "operator", scope: "webhooks:write", idempotency: "required" },
    params: DeliveryParams,
    response: ref(WebhookDelivery),
    handler: async ({ request, call }) =>
      deliveryJson((await deliveries.replayDelivery(deliveryRef(request.params), call)).delivery),
  });
}
