import { fileURLToPath } from "node:url";
import {
  type Logger,
  type MigrationSet,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  pingPool,
  type ServiceDefinition,
} from "@evalp/kit";

/** The interview plane owns the `interview` schema. */
export const SCHEMA = "interview";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [OUTBOX_MIGRATIONS_DIR, fileURLToPath(new URL("../migrations", import.meta.url))],
};

export type Deps = { pool: Pool; logger: Logger };

/** The interview service. Its RPCs are not built yet: it serves health and readiness only. */
export function interviewService(deps: Deps): ServiceDefinition {
  return {
    name: "interview",
    routes: () => {},
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
  };
}
