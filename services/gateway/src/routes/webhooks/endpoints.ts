import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { ref } from "../schemas.js";
import { refusingFields } from "./field-refusals.js";
import { WEBHOOKS } from "./plane.js";
import { endpointRef, WRITE } from "./requests.js";
import {
  EVENT_TYPES,
  endpointJson,
  endpointWithSecretJson,
  WebhookEndpoint,
  WebhookEndpointCreated,
} from "./wire.js";

const EventTypes = Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: 50 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });

/** `ENV/webhooks`: create, list, get, change and delete an endpoint. */
export async function webhookEndpointRoutes(app: Api<typeof ENV_PREFIX>, deps: RouteDeps): Promise<void> {
  const endpoints = deps.upstreams.webhooks.endpoints;
  const { list, read } = resources(app, WEBHOOKS, deps.cursors);

  route(app, WEBHOOKS, "createWebhookEndpoint", "POST /webhooks", {
    access: WRITE,
    body: Type.Object(
      {
        url: Url,
        event_types: EventTypes,
        enabled: Type.Optional(Type.Boolean({ default: true })),
        secret: Type.Optional(Type.String({ pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$", maxLength: 100 })),
      },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(WebhookEndpointCreated),
    errors: [409],
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

  list("listWebhookEndpoints", "GET /webhooks", "webhooks:read", WebhookEndpoint, ({ params }, page, call) =>
    endpoints.listEndpoints({ environment: environmentRef(params), page }, call),
  );

  read("getWebhookEndpoint", "GET /webhooks/:id", "webhooks:read", WebhookEndpoint, {
    rpc: ({ params }, call) => endpoints.getEndpoint(endpointRef(params), call),
    json: (answer) => endpointJson(answer.endpoint),
  });

  route(app, WEBHOOKS, "updateWebhookEndpoint", "PATCH /webhooks/:id", {
    access: WRITE,
    body: Type.Object(
      {
        url: Type.Optional(Url),
        event_types: Type.Optional(EventTypes),
        enabled: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    response: ref(WebhookEndpoint),
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

  route(app, WEBHOOKS, "deleteWebhookEndpoint", "DELETE /webhooks/:id", {
    access: WRITE,
    status: 204,
    handler: async ({ request, call }) => {
      await endpoints.deleteEndpoint(endpointRef(request.params), call);
      return undefined;
    },
  });
}
