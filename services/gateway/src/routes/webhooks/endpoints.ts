import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import {
  COMMON_ERRORS,
  DateTime,
  EnvParams,
  ErrorBody,
  IdempotentHeaders,
  Page,
  PageQuery,
} from "../schemas.js";
import {
  deliveryJson,
  ENV,
  EVENT_TYPES,
  endpointJson,
  refusingFields,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from "./bodies.js";

type EndpointPath = EnvPath & { id: string };
const EndpointParams = Type.Composite([EnvParams, Type.Object({ id: Type.String() })]);
const EventTypes = Type.Array(StringEnum(EVENT_TYPES), { minItems: 1, maxItems: 50 });
const Url = Type.String({ minLength: 1, maxLength: 2048 });
const write = { auth: "operator", scope: "webhooks:write", idempotency: "required" } as const;
const read = { auth: "operator", scope: "webhooks:read" } as const;

/** `ENV/webhooks`: create (#12 lists), get, patch, delete, rotate-secret, test, recover. */
export function webhookEndpointRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const endpoints = deps.upstreams.webhooks.endpoints;

  app.post(
    `${ENV}/webhooks`,
    {
      config: { access: write },
      schema: {
        tags: ["webhooks"],
        summary: "Create a webhook endpoint; its secret is shown in this response only",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            url: Url,
            event_types: EventTypes,
            enabled: Type.Optional(Type.Boolean({ default: true })),
            secret: Type.Optional(Type.String({ pattern: "^whsec_[A-Za-z0-9+/]+={0,2}$", maxLength: 100 })),
          },
          { additionalProperties: false },
        ),
        response: { 201: WebhookEndpointWithSecret, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as { url: string; event_types: string[]; enabled?: boolean; secret?: string };
      const answer = await refusingFields(
        endpoints.createEndpoint(
          {
            environment: environmentRef(request.params as EnvPath),
            url: body.url,
            eventTypes: body.event_types,
            enabled: body.enabled ?? true,
            secret: body.secret,
          },
          callOptions(request),
        ),
      );
      return reply.code(201).send({ ...endpointJson(answer.endpoint), secret: answer.secret });
    },
  );

  app.get(
    `${ENV}/webhooks`,
    {
      config: { access: read },
      schema: {
        tags: ["webhooks"],
        summary: "List webhook endpoints, newest first (never their secrets)",
        params: EnvParams,
        querystring: PageQuery,
        response: { 200: Page(WebhookEndpoint, "WebhookEndpointPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await endpoints.listEndpoints(
        { environment: environmentRef(request.params as EnvPath), page },
        callOptions(request),
      );
      return pageBody(request, deps.cursors, answer.items.map(endpointJson), answer.page);
    },
  );

  app.get(
    `${ENV}/webhooks/:id`,
    {
      config: { access: read },
      schema: {
        tags: ["webhooks"],
        summary: "Get a webhook endpoint",
        params: EndpointParams,
        response: { 200: WebhookEndpoint, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EndpointPath;
      const answer = await endpoints.getEndpoint(
        { environment: environmentRef(params), endpointId: params.id },
        callOptions(request),
      );
      return endpointJson(answer.endpoint);
    },
  );

  app.patch(
    `${ENV}/webhooks/:id`,
    {
      config: { access: write },
      schema: {
        tags: ["webhooks"],
        summary: "Change a webhook endpoint; disabling dead-letters its waiting deliveries",
        params: EndpointParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            url: Type.Optional(Url),
            event_types: Type.Optional(EventTypes),
            enabled: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
        response: { 200: WebhookEndpoint, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EndpointPath;
      const body = request.body as { url?: string; event_types?: string[]; enabled?: boolean };
      const answer = await refusingFields(
        endpoints.updateEndpoint(
          {
            environment: environmentRef(params),
            endpointId: params.id,
            url: body.url,
            eventTypes: body.event_types ?? [],
            setEventTypes: body.event_types !== undefined,
            enabled: body.enabled,
          },
          callOptions(request),
        ),
      );
      return endpointJson(answer.endpoint);
    },
  );

  app.delete(
    `${ENV}/webhooks/:id`,
    {
      config: { access: write },
      schema: {
        tags: ["webhooks"],
        summary: "Delete a webhook endpoint",
        params: EndpointParams,
        headers: IdempotentHeaders,
        response: { 204: Type.Null(), ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const params = request.params as EndpointPath;
      await endpoints.deleteEndpoint(
        { environment: environmentRef(params), endpointId: params.id },
        callOptions(request),
      );
      // An empty string (not nothing) so that an idempotent retry replays this 204.
      return reply.code(204).send("");
    },
  );

  app.post(
    `${ENV}/webhooks/:id/rotate-secret`,
    {
      config: { access: write },
      schema: {
        tags: ["webhooks"],
        summary: "Rotate the secret; the previous one keeps signing beside the new one for 24 h",
        params: EndpointParams,
        headers: IdempotentHeaders,
        response: { 200: WebhookEndpointWithSecret, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EndpointPath;
      const answer = await endpoints.rotateSecret(
        { environment: environmentRef(params), endpointId: params.id },
        callOptions(request),
      );
      return { ...endpointJson(answer.endpoint), secret: answer.secret };
    },
  );

  app.post(
    `${ENV}/webhooks/:id/test`,
    {
      config: { access: write },
      schema: {
        tags: ["webhooks"],
        summary: "Send a webhook.test event to this endpoint, attempted at once",
        params: EndpointParams,
        headers: IdempotentHeaders,
        response: { 200: WebhookDelivery, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EndpointPath;
      const answer = await endpoints.testEndpoint(
        { environment: environmentRef(params), endpointId: params.id },
        callOptions(request),
      );
      return deliveryJson(answer.delivery);
    },
  );

  app.post(
    `${ENV}/webhooks/:id/recover`,
    {
      config: { access: write },
      schema: {
        tags: ["webhooks"],
        summary: "Re-queue the endpoint's failed and dead-lettered deliveries created since a time",
        params: EndpointParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { since: DateTime, dry_run: Type.Optional(Type.Boolean({ default: false })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ count: Type.Integer() }, { title: "RecoverResult" }),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request) => {
      const params = request.params as EndpointPath;
      const body = request.body as { since: string; dry_run?: boolean };
      const answer = await endpoints.recoverEndpoint(
        {
          environment: environmentRef(params),
          endpointId: params.id,
          since: timestampFromDate(new Date(body.since)),
          dryRun: body.dry_run ?? false,
        },
        callOptions(request),
      );
      return { count: answer.count };
    },
  );
}
