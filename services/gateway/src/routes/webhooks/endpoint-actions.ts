import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { DateTime, ref } from "../schemas.js";
import { EndpointParams, endpointRef, WRITE } from "./endpoint-path.js";
import {
  deliveryJson,
  endpointWithSecretJson,
  WebhookDelivery,
  WebhookEndpointCreated,
  WebhookRecovery,
} from "./wire.js";

const TAG = "webhooks";

/** `ENV/webhooks/{id}/…`: rotate an endpoint's secret, send it a test event, recover its failures. */
export async function webhookEndpointActionRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const endpoints = deps.upstreams.webhooks.endpoints;

  route(app, TAG, {
    method: "POST",
    url: "/webhooks/:id/rotate-secret",
    operationId: "rotateWebhookSecret",
    summary: "Rotate a webhook secret",
    description:
      "Gives the endpoint a new secret, shown in this answer only; for 24 hours deliveries are signed " +
      "with the previous one too, so a receiver can switch. Requires `webhooks:write` and an " +
      "Idempotency-Key.",
    access: WRITE,
    params: EndpointParams,
    response: ref(WebhookEndpointCreated),
    responseDescription: "The endpoint with its new secret.",
    handler: async ({ request, call }) =>
      endpointWithSecretJson(await endpoints.rotateSecret(endpointRef(request.params), call)),
  });

  route(app, TAG, {
    method: "POST",
    url: "/webhooks/:id/test",
    operationId: "testWebhookEndpoint",
    summary: "Send a test event",
    description:
      "Delivers a `webhook.test` event to this endpoint alone, attempted at once. Requires " +
      "`webhooks:write` and an Idempotency-Key.",
    access: WRITE,
    params: EndpointParams,
    response: ref(WebhookDelivery),
    responseDescription: "The test event's delivery.",
    handler: async ({ request, call }) =>
      deliveryJson((await endpoints.testEndpoint(endpointRef(request.params), call)).delivery),
  });

  route(app, TAG, {
    method: "POST",
    url: "/webhooks/:id/recover",
    operationId: "recoverWebhookDeliveries",
    summary: "Recover failed deliveries",
    description:
      "Re-queues the endpoint's `failed` and `dead_letter` deliveries created since `since`; with " +
      "`dry_run`, only counts them. Requires `webhooks:write` and an Idempotency-Key.",
    access: WRITE,
    params: EndpointParams,
    body: Type.Object(
      { since: DateTime, dry_run: Type.Optional(Type.Boolean({ default: false })) },
      { additionalProperties: false },
    ),
    response: ref(WebhookRecovery),
    responseDescription: "How many deliveries were (or would be) re-queued.",
    handler: async ({ request, call }) => {
      const answer = await endpoints.recoverEndpoint(
        {
          ...endpointRef(request.params),
          since: timestampFromDate(new Date(request.body.since)),
          dryRun: request.body.dry_run ?? false,
        },
        call,
      );
      return { count: answer.count };
    },
  });
}
