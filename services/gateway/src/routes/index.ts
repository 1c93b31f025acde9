import type { FastifyInstance } from "fastify";
import { registerControlRoutes } from "./control/index.js";
import type { RouteDeps } from "./deps.js";
import { registerGuideRoutes } from "./guides.js";
import { registerInterviewRoutes } from "./interview/index.js";
import { registerPlatformRoutes } from "./platform/index.js";
import { ApplicationError, ValidationError } from "./responses.js";
import { registerWebhookRoutes } from "./webhooks/index.js";

/** Every route of the API, plane by plane, the named schemas they share, and the guides. */
export async function registerRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of [ApplicationError, ValidationError]) app.addSchema(schema);
  // What every list route pages with (route.ts reads it from the plane's plugin).
  app.decorate("cursors", deps.cursors);
  await registerControlRoutes(app, deps);
  await registerPlatformRoutes(app, deps);
  await registerInterviewRoutes(app, deps);
  await registerWebhookRoutes(app, deps);
  registerGuideRoutes(app);
}
