import { type MigrationSet, planeMigrations, planeService, type ServiceDefinition } from "@evalp/kit";
import type { Deps } from "./deps.js";
import { CALLERS, routes } from "./routes.js";

/** The control plane owns the `control` schema. */
export const SCHEMA = "control";

export const migrations: MigrationSet = planeMigrations(SCHEMA, new URL("../migrations", import.meta.url));

/** The control service, built from its dependencies and not yet listening. */
export function controlService(deps: Deps): ServiceDefinition {
  return planeService("control", deps.pool, { routes: routes(deps), callers: CALLERS });
}
