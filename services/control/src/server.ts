import { fileURLToPath } from "node:url";
import {
  IDEMPOTENCY_MIGRATIONS_DIR,
  idempotencyInterceptor,
  type MigrationSet,
  OUTBOX_MIGRATIONS_DIR,
  pingPool,
  type ServiceDefinition,
} from "@evalp/kit";
import type { Deps } from "./deps.js";
import { CALLERS, routes } from "./routes.js";

/** The control plane owns the `control` schema. */
export const SCHEMA = "control";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [
    OUTBOX_MIGRATIONS_DIR,
    IDEMPOTENCY_MIGRATIONS_DIR,
    fileURLToPath(new URL("../migrations", import.meta.url)),
  ],
};

/** The control service, built from its dependencies and not yet listening. */
export function controlService(deps: Deps): ServiceDefinition {
  return {
    name: "control",
    routes: routes(deps),
    callers: CALLERS,
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
    interceptors: [idempotencyInterceptor(deps.pool)],
  };
}
