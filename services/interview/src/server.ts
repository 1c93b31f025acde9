import { fileURLToPath } from "node:url";
import { create } from "@bufbuild/protobuf";
import {
  type Logger,
  type MigrationSet,
  OUTBOX_MIGRATIONS_DIR,
  type Pool,
  pingPool,
  type ServiceDefinition,
} from "@evalp/kit";
import { CountUsageResponseSchema, UsageService } from "@evalp/proto/common/v1/usage";

/** The interview plane owns the `interview` schema. */
export const SCHEMA = "interview";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [OUTBOX_MIGRATIONS_DIR, fileURLToPath(new URL("../migrations", import.meta.url))],
};

export type Deps = { pool: Pool; logger: Logger };

/** The interview service. Its RPCs are not built yet: it serves health, readiness and (empty) usage. */
export function interviewService(deps: Deps): ServiceDefinition {
  return {
    name: "interview",
    routes: (router) => {
      // Counted rows of this plane do not exist yet; the counters it owns read 0.
      router.service(UsageService, { countUsage: () => create(CountUsageResponseSchema, { usage: {} }) });
    },
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
  };
}
