import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type PlaneProse, type Prose, plane, under } from "../index.js";
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
  await under(app, ENV_PREFIX, async (api) => {
    await webhookEndpointRoutes(api, deps);
    await webhookEndpointActionRoutes(api, deps);
    await webhookDeliveryRoutes(api, deps);
    await webhookEventRoutes(api, deps);
  });
}

/** The webhooks plane's operations, by operationId: each is one route of the plane. */
export type WebhooksOperationId = keyof typeof prose;

/**
 * What `/openapi.json` says of each of the webhooks plane's operations (prose.json, by operationId):
 * its summary, its description and what each success status means. The routes beside this file
 * declare the rest: a route's `id` is one of these (the compiler refuses one without its prose),
 * and a unit test finds the route of each.
 */
export const WEBHOOKS_PROSE = prose satisfies Record<WebhooksOperationId, Prose>;

/** The webhooks plane's tag, and its operations' prose (above). */
export const WEBHOOKS: PlaneProse<WebhooksOperationId> = plane("webhooks", WEBHOOKS_PROSE);
