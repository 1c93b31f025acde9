import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { route } from "../index.js";
import { DateTime, type ENV_PREFIX, ref } from "../wire.js";
import { type WebhooksApi, WRITE } from "./index.js";
import {
  deliveryJson,
  endpointRef,
  endpointWithSecretJson,
  WebhookDelivery,
  WebhookEndpointCreated,
  WebhookRecovery,
} from "./wire.js";

/** `ENV/webhooks/{id}/…`: rotate an endpoint's secret, send it a test event, recover its failures. */
export function webhookEndpointActionRoutes(app: WebhooksApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const endpoints = deps.upstreams.webhooks.endpoints;

  route(app, "rotateWebhookSecret", "POST /webhooks/:id/rotate-secret", WRITE, {
    answer: ref(WebhookEndpointCreated),
    handler: async ({ request, call }) =>
      endpointWithSecretJson(await endpoints.rotateSecret(endpointRef(request.params), call)),
  });

  route(app, "testWebhookEndpoint", "POST /webhooks/:id/test", WRITE, {
    answer: ref(WebhookDelivery),
    handler: async ({ request, call }) =>
      deliveryJson((await endpoints.testEndpoint(endpointRef(request.params), call)).delivery),
  });

  route(app, "recoverWebhookDeliveries", "POST /webhooks/:id/recover", WRITE, {
    body: Type.Object(
      { since: DateTime, dry_run: Type.Optional(Type.Boolean({ default: false })) },
      { additionalProperties: false },
    ),
    answer: ref(WebhookRecovery),
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
