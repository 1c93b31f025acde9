import { fileURLToPath } from "node:url";
import { type MigrationSet, OUTBOX_MIGRATIONS_DIR, pingPool, type ServiceDefinition } from "@evalp/kit";
import type { Deps } from "./deps.js";
import { realtimeInterceptor } from "./realtime.js";
import { CALLERS, routes } from "./routes.js";

/** The interview plane owns the `interview` schema. */
export const SCHEMA = "interview";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [OUTBOX_MIGRATIONS_DIR, fileURLToPath(new URL("../migrations", import.meta.url))],
};

/**
 * The interview service (evaluations, participant sessions, the interview and its transcript,
 * behavioral events, analytics, usage), built from its dependencies and not yet listening.
 */
export function interviewService(deps: Deps): ServiceDefinition {
  return {
    name: "interview",
    routes: routes(deps),
    callers: CALLERS,
    checks: [{ name: "postgres", check: () => pingPool(deps.pool) }],
    interceptors: [realtimeInterceptor(deps.realtime)],
  };
}
