import { type MigrationSet, planeMigrations, planeService, type ServiceDefinition } from "@evalp/kit";
import { SubjectService } from "@evalp/proto/control/v1/subject";
import type { Deps } from "./deps.js";
import { CALLERS, routes } from "./routes.js";

/** The control plane owns the `control` schema. */
export const SCHEMA = "control";

export const migrations: MigrationSet = planeMigrations(SCHEMA, new URL("../migrations", import.meta.url));

/** The control service, built from its dependencies and not yet listening. */
export function controlService(deps: Deps): ServiceDefinition {
  return planeService("control", deps.pool, {
    routes: routes(deps),
    callers: CALLERS,
    // The import's first statement is its transaction's, which records the key (rpc/import-subjects.ts).
    recordsFirst: [SubjectService.method.importSubjects],
  });
}
