import {
  type MigrationSet,
  planeMigrations,
  planeService,
  type ReadinessCheck,
  type ServiceDefinition,
} from "@evalp/kit";
import type { Deps } from "./deps.js";
import { CALLERS, routes } from "./routes.js";

/** The webhooks plane owns the `webhooks` schema. */
export const SCHEMA = "webhooks";

export const migrations: MigrationSet = planeMigrations(SCHEMA, new URL("../migrations", import.meta.url));

/**
 * The webhooks service's RPCs (endpoints, deliveries, usage), built from its dependencies and not
 * yet listening. Its workers (relay, consumer, dispatcher) are built apart: `createWebhookWorkers`.
 */
export function webhooksService(deps: Deps, extraChecks: ReadinessCheck[] = []): ServiceDefinition {
  return planeService("webhooks", deps.pool, { routes: routes(deps), callers: CALLERS, checks: extraChecks });
}
