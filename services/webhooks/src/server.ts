import { fileURLToPath } from "node:url";
import {
  type Logger,
  type MigrationSet,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  pingPool,
  type ServiceDefinition,
} from "@evalp/kit";

/** The webhooks plane owns the `webhooks` schema. */
export const SCHEMA = "webhooks";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [OUTBOX_MIGRATIONS_DIR, fileURLToPath(new URL("../migrations", import.meta.url))],
};

export type Deps = { pool: Pool; logger: Logger };

/** The webhooks service. Its RPCs are not built yet: it serves health and readiness only. */
export function webhooksService(deps: Deps): ServiceDefinition {
  return {
    name: "webhooks",
    routes: () => {},
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
  };
}
