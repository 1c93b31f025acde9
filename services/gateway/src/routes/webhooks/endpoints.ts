import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, Page, PageQuery, ref } from "../schemas.js";
import { EndpointParams, endpointRef, READ, WRITE } from "./endpoint-path.js";
import { refusingFields } from "./field-refusals.js";
import {
  EVENT_TYPES,
  endpointJson,
  endpointWithSecretJson,
  WebhookEndpoint,
  WebhookEndpointCreated,
} from "./wire.js";

const TAG = "webhooks";
const EventTypes = Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: 50 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });

/** `ENV/webhooks`: create, list, get, change and delete an endpoint. */
export async function webhookEndpointRoutes(app: Api, deps: RouteDeps): Promise<void> {
  const endpoints = deps.upstreams.webhooks.endpoints;

  route(app, TAG, {
    method: "POST",
    url: "/webhooks",
    operationId: "createWebhookEndpoint",
    summary: "Create a webhook endpoint",
    description:
      "Registers an endpoint for the environment's events of `event_types` (`*`: all). Its signing " +
      "`secret` (`whsec_` and base64 of 24 to 64 bytes) is generated when not given and shown in this " +
      "answer only. A private or non-HTTPS target is refused item by item (422); past the " +
      "`webhook_endpoints` quota, 409 `quota_exceeded`. Requires `webhooks:write` and an Idempotency-Key.",
    access: WRITE,
    params: EnvParams,
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
    responseDescription: "The endpoint, created, with its secret.",
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

  route(app, TAG, {
    method: "GET",
    url: "/webhooks",
    operationId: "listWebhookEndpoints",
    summary: "List webhook endpoints",
    description:
      "The environment's endpoints, newest first, a page at a time (docs/paging.md), never with their " +
      "secrets. Requires `webhooks:read`.",
    access: READ,
    params: EnvParams,
    querystring: PageQuery,
    response: Page(WebhookEndpoint, "WebhookEndpointPage"),
    responseDescription: "A page of endpoints.",
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => endpoints.listEndpoints({ environment: environmentRef(request.params), page }, call),
        endpointJson,
      ),
  });

  route(app, TAG, {
    method: "GET",
    url: "/webhooks/:id",
    operationId: "getWebhookEndpoint",
    summary: "Get a webhook endpoint",
    description: "One endpoint of the environment, without its secret. Requires `webhooks:read`.",
    access: READ,
    params: EndpointParams,
    response: ref(WebhookEndpoint),
    responseDescription: "The endpoint.",
    handler: async ({ request, call }) =>
      endpointJson((await endpoints.getEndpoint(endpointRef(request.params), call)).endpoint),
  });

  route(app, TAG, {
    method: "PATCH",
    url: "/webhooks/:id",
    operationId: "updateWebhookEndpoint",
    summary: "Change a webhook endpoint",
    description:
      "Changes the fields given. Disabling sets `disabled_at` and dead-letters the endpoint's waiting " +
      "deliveries; enabling clears it. A refused target is 422, item by item. Requires `webhooks:write` " +
      "and an Idempotency-Key.",
    access: WRITE,
    params: EndpointParams,
    body: Type.Object(
      {
        url: Type.Optional(Url),
        event_types: Type.Optional(EventTypes),
        enabled: Type.Optional(Type.Boolean()),
      },
      { additionalProperties: false },
    ),
    response: ref(WebhookEndpoint),
    responseDescription: "The endpoint, changed.",
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

  route(app, TAG, {
    method: "DELETE",
    url: "/webhooks/:id",
    operationId: "deleteWebhookEndpoint",
    summary: "Delete a webhook endpoint",
    description:
      "Deletes the endpoint: it is sent nothing more and no longer counts against `webhook_endpoints`. " +
      "Requires `webhooks:write` and an Idempotency-Key.",
    access: WRITE,
    params: EndpointParams,
    status: 204,
    responseDescription: "The endpoint, deleted.",
    handler: async ({ request, call }) => {
      await endpoints.deleteEndpoint(endpointRef(request.params), call);
      return undefined;
    },
  });
}
