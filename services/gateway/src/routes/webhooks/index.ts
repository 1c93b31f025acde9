import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type Api, plane, under } from "../index.js";
import { ENV_PREFIX } from "../wire.js";
import { webhookDeliveryRoutes } from "./deliveries.js";
import { webhookEndpointActionRoutes } from "./endpoint-actions.js";
import { webhookEndpointRoutes } from "./endpoints.js";
import { webhookEventRoutes } from "./events.js";
import prose from "./prose.json" with { type: "json" };
import { WEBHOOK_SCHEMAS } from "./wire.js";

/** The webhooks plane's routes: an environment's endpoints, their deliveries, and its events live. */
export async function registerWebhookRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of WEBHOOK_SCHEMAS) app.addSchema(schema);
  await under(app, WEBHOOKS, ENV_PREFIX, deps, [
    webhookEndpointRoutes,
    webhookEndpointActionRoutes,
    webhookDeliveryRoutes,
    webhookEventRoutes,
  ]);
}

/**
 * The webhooks plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const WEBHOOKS = plane("webhooks", prose);

/** A plugin of the webhooks plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type WebhooksApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;
