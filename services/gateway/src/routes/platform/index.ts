import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type PlaneProse, type Prose, plane, under } from "../index.js";
import { ENV_PREFIX } from "../wire.js";
import { bundleRoutes } from "./bundles.js";
import { continuousRoutes } from "./continuous.js";
import prose from "./prose.json" with { type: "json" };
import { templateRoutes } from "./templates.js";
import { APP_PREFIX, PLATFORM_SCHEMAS } from "./wire.js";

/** The platform's routes: an app's templates and bundles, an environment's continuous answers. */
export async function registerPlatformRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of PLATFORM_SCHEMAS) app.addSchema(schema);
  await under(app, APP_PREFIX, async (api) => {
    await templateRoutes(api, deps);
    await bundleRoutes(api, deps);
  });
  await under(app, ENV_PREFIX, (api) => continuousRoutes(api, deps));
}

/** The platform plane's operations, by operationId: each is one route of the plane. */
export type PlatformOperationId = keyof typeof prose;

/**
 * What `/openapi.json` says of each of the platform plane's operations (prose.json, by operationId):
 * its summary, its description and what each success status means. The routes beside this file
 * declare the rest: a route's `id` is one of these (the compiler refuses one without its prose),
 * and a unit test finds the route of each.
 */
export const PLATFORM_PROSE = prose satisfies Record<PlatformOperationId, Prose>;

/** The platform plane's tag, and its operations' prose (above). */
export const PLATFORM: PlaneProse<PlatformOperationId> = plane("platform", PLATFORM_PROSE);
