import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { ENV_PREFIX } from "../environment.js";
import { under } from "../route.js";
import { webhookDeliveryRoutes } from "./deliveries.js";
import { webhookEndpointActionRoutes } from "./endpoint-actions.js";
import { webhookEndpointRoutes } from "./endpoints.js";
import { webhookEventRoutes } from "./events.js";
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
