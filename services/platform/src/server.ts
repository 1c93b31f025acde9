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

/** The platform plane owns the `platform` schema. */
export const SCHEMA = "platform";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [
    OUTBOX_MIGRATIONS_DIR,
    IDEMPOTENCY_MIGRATIONS_DIR,
    fileURLToPath(new URL("../migrations", import.meta.url)),
  ],
};

/** The platform service (templates, bundles, preview, continuous answers), not yet listening. */
export function platformService(deps: Deps): ServiceDefinition {
  return {
    name: "platform",
    routes: routes(deps),
    callers: CALLERS,
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
    interceptors: [idempotencyInterceptor(deps.pool)],
  };
}
