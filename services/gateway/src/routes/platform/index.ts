import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { bundleRoutes } from "./bundles.js";
import { continuousRoutes } from "./continuous.js";
import { templateRoutes } from "./templates.js";

/** The platform's routes: templates, bundles and continuous answers. */
export async function registerPlatformRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  templateRoutes(app, deps);
  bundleRoutes(app, deps);
  continuousRoutes(app, deps);
}
