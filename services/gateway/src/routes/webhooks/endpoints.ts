import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { byPath, route } from "../index.js";
import { type ENV_PREFIX, environmentPage, environmentRef, pageOfItems, ref } from "../wire.js";
import { refusingFields } from "./field-refusals.js";
import { READ, type WebhooksApi, WRITE } from "./index.js";
import {
  EVENT_TYPES,
  endpointJson,
  endpointRef,
  endpointWithSecretJson,
  WebhookEndpoint,
  WebhookEndpointCreated,
} from "./wire.js";

const EventTypes = Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: 50 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });

/** `ENV/webhooks`: create, list, get, change and delete an endpoint. */
export function webhookEndpointRoutes(app: WebhooksApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const endpoints = deps.upstreams.webhooks.endpoints;
  route(app, "createWebhookEndpoint", "POST /webhooks", WRITE, {
    body: Type.Object(
      {
        url: Url,
        event_types: EventTypes,
        enabled: Type.Optional(Type.Boolean({ default: true })),
        secret: Type.Optional(Type.String({ pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$", maxLength: 100 })),
      },
      { additionalProperties: false },
    ),
    answer: ref(WebhookEndpointCreated),
    handler: async ({ request, call }) => {
      const { url, event_types, enabled, secret } = request.body;
      const created = endpoints.createEndpoint(
        {
          environment: environmentRef(request.params),
          url,
          eventTypes: event_types,
          enabled: enabled ?? true,
          secret,
        },
        call,
      );
      return endpointWithSecretJson(await refusingFields(created));
    },
  });

  route(app, "listWebhookEndpoints", "GET /webhooks", READ, {
    answer: pageOfItems(WebhookEndpoint),
    list: ({ params }, page, call) => endpoints.listEndpoints(environmentPage(params, page), call),
    item: endpointJson,
  });

  route(app, "getWebhookEndpoint", "GET /webhooks/:id", READ, {
    answer: ref(WebhookEndpoint),
    ...byPath(endpoints.getEndpoint, endpointRef, (answer) => endpointJson(answer.endpoint)),
  });

  route(app, "updateWebhookEndpoint", "PATCH /webhooks/:id", WRITE, {
    body: Type.Object(
      {
        url: Type.Optional(Url),
        event_types: Type.Optional(EventTypes),
        enabled: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    answer: ref(WebhookEndpoint),
    handler: async ({ request, call }) => {
      const { url, event_types, enabled } = request.body;
      const updated = endpoints.updateEndpoint(
        {
          ...endpointRef(request.params),
          url,
          // The RPC tells "leave the types" from "set them" by a flag (a list cannot be absent).
          eventTypes: event_types ?? [],
          setEventTypes: event_types !== undefined,
          enabled,
        },
        call,
      );
      return endpointJson((await refusingFields(updated)).endpoint);
    },
  });

  route(app, "deleteWebhookEndpoint", "DELETE /webhooks/:id", WRITE, {
    handler: async ({ request, call }) => {
      await endpoints.deleteEndpoint(endpointRef(request.params), call);
      return undefined;
    },
  });
}
