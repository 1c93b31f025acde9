import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { CallerTable } from "../auth/service-callers.js";
import type { ServiceTokenVerifier } from "../auth/service-tokens.js";
import { createConnectServer, listen } from "../rpc/connect-server.js";
import { createMetricsRegistry } from "../telemetry/metrics.js";
import { createOpsServer } from "./ops-server.js";
import type { ReadinessCheck } from "./readiness.js";

/** What a service is, apart from how it is run: its RPC routes and its readiness checks. */
export type ServiceDefinition = {
  name: string;
  routes: (router: ConnectRouter) => void;
  checks: ReadinessCheck[];
  /** Which process may call which of its RPCs (`callerTable`, declared beside the routes). */
  callers: CallerTable;
  /** Interceptors of this service's own, innermost (they see what its handlers answer). */
  interceptors?: Interceptor[];
};

/** A listening service: where it listens and how to stop it. */
export type RunningService = { rpcPort: number; opsPort: number; close(): Promise<void> };

/**
 * Listens with a service's RPC server (HTTP/2 Connect) and its ops server. Used alike by each
 * service's `main.ts` and by the integration tests, which pass port 0.
 */
export async function serveService(
  definition: ServiceDefinition,
  options: {
    logger: Logger;
    host: string;
    rpcPort: number;
    opsPort: number;
    /** See `createConnectServer`; RPC_MAX_CONNECTION_AGE_MS in the services. */
    maxConnectionAgeMs?: number;
    /** What callers' tokens are verified with (`serviceVerifier`). */
    tokens: ServiceTokenVerifier;
    /** The process's registry, when its background work counts there too; else one of the server's own. */
    registry?: Registry;
  },
): Promise<RunningService> {
  const registry = options.registry ?? createMetricsRegistry(definition.name);
  const rpc = createConnectServer({
    routes: definition.routes,
    logger: options.logger,
    checks: definition.checks,
    interceptors: definition.interceptors ?? [],
    registry,
    tokens: options.tokens,
    callers: definition.callers,
    ...(options.maxConnectionAgeMs === undefined ? {} : { maxConnectionAgeMs: options.maxConnectionAgeMs }),
  });
  const ops = createOpsServer({ registry, checks: definition.checks });
  const rpcPort = await listen(rpc.server, options.rpcPort, options.host);
  const opsPort = await listen(ops, options.opsPort, options.host);
  return {
    rpcPort,
    opsPort,
    async close() {
      await rpc.close();
      await new Promise<void>((resolve) => ops.close(() => resolve()));
    },
  };
}
