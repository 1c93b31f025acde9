import { type MigrationSet, planeMigrations, planeService, type ServiceDefinition } from "@evalp/kit";
import type { Deps } from "./deps.js";
import { CALLERS, routes } from "./routes.js";

/** The platform plane owns the `platform` schema. */
export const SCHEMA = "platform";

export const migrations: MigrationSet = planeMigrations(SCHEMA, new URL("../migrations", import.meta.url));

/** The platform service (templates, bundles, preview, continuous answers), not yet listening. */
export function platformService(deps: Deps): ServiceDefinition {
  return planeService("platform", deps.pool, { routes: routes(deps), callers: CALLERS });
}
