import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { webhookDeliveryRoutes } from "./deliveries.js";
import { webhookEndpointRoutes } from "./endpoints.js";

/** The webhooks plane's routes: endpoints and their deliveries. */
export async function registerWebhookRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  webhookEndpointRoutes(app, deps);
  webhookDeliveryRoutes(app, deps);
}
