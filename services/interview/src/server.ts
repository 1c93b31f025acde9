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
import { realtimeInterceptor } from "./realtime.js";
import { CALLERS, routes } from "./routes.js";

/** The interview plane owns the `interview` schema. */
export const SCHEMA = "interview";

export const migrations: MigrationSet = {
  schema: SCHEMA,
  dirs: [
    OUTBOX_MIGRATIONS_DIR,
    IDEMPOTENCY_MIGRATIONS_DIR,
    fileURLToPath(new URL("../migrations", import.meta.url)),
  ],
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
    // Outermost: an answer given again from the key's row is not pushed to the sockets twice.
    interceptors: [idempotencyInterceptor(deps.pool), realtimeInterceptor(deps.realtime)],
  };
}
