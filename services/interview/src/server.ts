import { type MigrationSet, planeMigrations, planeService, type ServiceDefinition } from "@evalp/kit";
import type { Deps } from "./deps.js";
import { realtimeInterceptor } from "./realtime.js";
import { CALLERS, routes } from "./routes.js";

/** The interview plane owns the `interview` schema. */
export const SCHEMA = "interview";

export const migrations: MigrationSet = planeMigrations(SCHEMA, new URL("../migrations", import.meta.url));

/**
 * The interview service (evaluations, participant sessions, the interview and its transcript,
 * behavioral events, analytics, usage), built from its dependencies and not yet listening.
 */
export function interviewService(deps: Deps): ServiceDefinition {
  return planeService("interview", deps.pool, {
    routes: routes(deps),
    callers: CALLERS,
    // Inside the idempotency interceptor: an answer given again from the key's row is not pushed
    // to the sockets twice.
    interceptors: [realtimeInterceptor(deps.realtime)],
  });
}
