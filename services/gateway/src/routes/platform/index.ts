import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { ENV_PREFIX } from "../environment.js";
import { under } from "../route.js";
import { bundleRoutes } from "./bundles.js";
import { continuousRoutes } from "./continuous.js";
import { APP_PREFIX } from "./requests.js";
import { templateRoutes } from "./templates.js";
import { PLATFORM_SCHEMAS } from "./wire.js";

/** The platform's routes: an app's templates and bundles, an environment's continuous answers. */
export async function registerPlatformRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of PLATFORM_SCHEMAS) app.addSchema(schema);
  await under(app, APP_PREFIX, async (api) => {
    await templateRoutes(api, deps);
    await bundleRoutes(api, deps);
  });
  await under(app, ENV_PREFIX, (api) => continuousRoutes(api, deps));
}
