import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import { COMMON_ERRORS, EnvParams, IdempotentHeaders, Page, PageQuery, Uuid } from "../schemas.js";
import {
  attemptJson,
  DELIVERY_STATUSES,
  deliveryJson,
  ENV,
  WebhookDelivery,
  WebhookDeliveryWithAttempts,
} from "./bodies.js";

type DeliveryPath = EnvPath & { delivery_id: string };
const DeliveryParams = Type.Composite([EnvParams, Type.Object({ delivery_id: Type.String() })]);

/** #13 `GET ENV/webhook-deliveries` (filters `status`, `endpoint_id`), get with attempts, #14 replay. */
export function webhookDeliveryRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const deliveries = deps.upstreams.webhooks.deliveries;

  app.get(
    `${ENV}/webhook-deliveries`,
    {
      config: { access: { auth: "operator", scope: "webhooks:read" } },
      schema: {
        tags: ["webhooks"],
        summary: "List webhook deliveries, newest first, by status and endpoint",
        params: EnvParams,
        querystring: Type.Composite([
          PageQuery,
          Type.Object({
            status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
            endpoint_id: Type.Optional(Uuid),
          }),
        ]),
        response: { 200: Page(WebhookDelivery, "WebhookDeliveryPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const query = request.query as {
        limit?: number;
        cursor?: string;
        status?: string;
        endpoint_id?: string;
      };
      const page = pageRequest(request, deps.cursors, query);
      const answer = await deliveries.listDeliveries(
        {
          environment: environmentRef(request.params as EnvPath),
          page,
          status: query.status,
          endpointId: query.endpoint_id,
        },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(deliveryJson), answer.page);
    },
  );

  app.get(
    `${ENV}/webhook-deliveries/:delivery_id`,
    {
      config: { access: { auth: "operator", scope: "webhooks:read" } },
      schema: {
        tags: ["webhooks"],
        summary: "Get a webhook delivery with its attempts",
        params: DeliveryParams,
        response: { 200: WebhookDeliveryWithAttempts, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as DeliveryPath;
      const answer = await deliveries.getDelivery(
        { environment: environmentRef(params), deliveryId: params.delivery_id },
        callOptions(request),
      );
      return {
        ...deliveryJson(answer.delivery),
        attempts: (answer.delivery?.attempts ?? []).map(attemptJson),
      };
    },
  );

  app.post(
    `${ENV}/webhook-deliveries/:delivery_id/replay`,
    {
      config: { access: { auth: "operator", scope: "webhooks:write", idempotency: "required" } },
      schema: {
        tags: ["webhooks"],
        summary: "Replay a delivery (any status): pending again, attempted at once",
        params: DeliveryParams,
        headers: IdempotentHeaders,
        response: { 200: WebhookDelivery, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as DeliveryPath;
      const answer = await deliveries.replayDelivery(
        { environment: environmentRef(params), deliveryId: params.delivery_id },
        callOptions(request),
      );
      return deliveryJson(answer.delivery);
    },
  );
}
