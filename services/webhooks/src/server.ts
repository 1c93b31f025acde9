import { fileURLToPath } from "node:url";
import {
  IDEMPOTENCY_MIGRATIONS_DIR,
  idempotencyInterceptor,
  type MigrationSet,
  OUTBOX_MIGRATIONS_DIR,
  pingPool,
  type ReadinessCheck,
  type ServiceDefinition,
} from "@evalp/kit";
import type { Deps } from "./deps.js";
import { CALLERS, routes } from "./routes.js";

/** The webhooks plane owns the `webhooks` schema. */
export const SCHEMA = "webhooks";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [
    OUTBOX_MIGRATIONS_DIR,
    IDEMPOTENCY_MIGRATIONS_DIR,
    fileURLToPath(new URL("../migrations", import.meta.url)),
  ],
};

/**
 * The webhooks service's RPCs (endpoints, deliveries, usage), built from its dependencies and not
 * yet listening. Its workers (relay, consumer, dispatcher) are built apart: `createWebhookWorkers`.
 */
export function webhooksService(deps: Deps, extraChecks: ReadinessCheck[] = []): ServiceDefinition {
  return {
    name: "webhooks",
    routes: routes(deps),
    callers: CALLERS,
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }, ...extraChecks],
    interceptors: [idempotencyInterceptor(deps.pool)],
  };
}
