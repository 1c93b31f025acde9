import type { FastifyInstance } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type Api, plane, under } from "../index.js";
import { ENV_PREFIX } from "../wire.js";
import { bundleRoutes } from "./bundles.js";
import { continuousRoutes } from "./continuous.js";
import prose from "./prose.json" with { type: "json" };
import { templateRoutes } from "./templates.js";
import { APP_PREFIX, PLATFORM_SCHEMAS } from "./wire.js";

/** The platform's routes: an app's templates and bundles, an environment's continuous answers. */
export async function registerPlatformRoutes(app: FastifyInstance, deps: RouteDeps): Promise<void> {
  for (const schema of PLATFORM_SCHEMAS) app.addSchema(schema);
  await under(app, PLATFORM, APP_PREFIX, deps, [templateRoutes, bundleRoutes]);
  await under(app, PLATFORM, ENV_PREFIX, deps, [continuousRoutes]);
}

/**
 * The platform plane's tag, and what `/openapi.json` says of each of its operations (prose.json, by
 * operationId): its summary, its description and what each success status means. The routes
 * beside this file declare the rest: a route's operation is one of these (the compiler refuses one
 * without its prose), and a unit test finds the route of each.
 */
export const PLATFORM = plane("platform", prose);

/** A plugin of the platform plane's routes under `Prefix` (`under`): its routes' operations are the plane's. */
export type PlatformApi<Prefix extends string> = Api<Prefix, keyof typeof prose>;
