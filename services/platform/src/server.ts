import { fileURLToPath } from "node:url";
import {
  type Logger,
  type MigrationSet,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  pingPool,
  type ServiceDefinition,
} from "@evalp/kit";

/** The platform plane owns the `platform` schema. */
export const SCHEMA = "platform";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [OUTBOX_MIGRATIONS_DIR, fileURLToPath(new URL("../migrations", import.meta.url))],
};

export type Deps = { pool: Pool; logger: Logger };

/** The platform service. Its RPCs are not built yet: it serves health and readiness only. */
export function platformService(deps: Deps): ServiceDefinition {
  return {
    name: "platform",
    routes: () => {},
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
  };
}
