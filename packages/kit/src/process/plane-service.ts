import { fileURLToPath } from "node:url";
import type { DescMethod } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { CallerTable } from "../auth/service-callers.js";
import { type Pool, pingPool } from "../db/db.js";
import { IDEMPOTENCY_MIGRATIONS_DIR, type MigrationSet, OUTBOX_MIGRATIONS_DIR } from "../db/migrate.js";
import { idempotencyInterceptor } from "../idempotency/idempotency-interceptor.js";
import type { ReadinessCheck } from "./readiness.js";
import type { ServiceDefinition } from "./serve.js";

/*
 * What every plane's `server.ts` is made of, so that the four differ only where the planes do.
 */

/** A plane's migrations into the schema it owns: kit's outbox and idempotency tables, then its own folder. */
export function planeMigrations(schema: string, own: URL): MigrationSet {
  return { schema, dirs: [OUTBOX_MIGRATIONS_DIR, IDEMPOTENCY_MIGRATIONS_DIR, fileURLToPath(own)] };
}

/**
 * A plane's RPC service: its routes and callers, its Postgres (and any `checks` of its own) as
 * readiness, and the Idempotency-Key interceptor outermost, so that an answer given again from a
 * key's row passes none of the plane's own `interceptors`.
 */
export function planeService(
  name: string,
  pool: Pool,
  parts: {
    routes: (router: ConnectRouter) => void;
    callers: CallerTable;
    interceptors?: Interceptor[];
    checks?: ReadinessCheck[];
    /** Keyed writes that need no look-up of their key before they run (`idempotencyInterceptor`). */
    recordsFirst?: DescMethod[];
  },
): ServiceDefinition {
  return {
    name,
    routes: parts.routes,
    callers: parts.callers,
    checks: [{ name: "postgres", check: () => pingPool(pool) }, ...(parts.checks ?? [])],
    interceptors: [
      idempotencyInterceptor(pool, { recordsFirst: parts.recordsFirst }),
      ...(parts.interceptors ?? []),
    ],
  };
}
