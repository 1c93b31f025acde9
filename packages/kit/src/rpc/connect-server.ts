import http2 from "node:http2";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectH2Handler } from "@evalp/connect-h2";
import { ErrorDetailSchema } from "@evalp/proto/common/v1/error";
import { HealthService } from "@evalp/proto/common/v1/health";
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import type { CallerTable } from "../auth/service-callers.js";
import { requireServiceTokens, type ServiceTokenVerifier } from "../auth/service-tokens.js";
import { serveGrpcHealth } from "../process/grpc-health.js";
import { serveGrpcReflection } from "../process/grpc-reflection.js";
import { type ReadinessCheck, reusedReadiness, runReadiness } from "../process/readiness.js";
import { rpcMetricsInterceptor } from "../telemetry/metrics.js";
import { WIRE_READ_OPTIONS } from "./connect-client.js";
import { errorInterceptor } from "./connect-errors.js";
import { peerOutage } from "./peer-outage.js";
import { requestContextInterceptor } from "./request-context.js";
import { traceServerInterceptor } from "./rpc-tracing.js";

/** An HTTP/2 Connect server that can also drain its open sessions. */
export type ConnectServer = {
  server: http2.Http2Server;
  /** Stops accepting, lets in-flight calls finish (GOAWAY), resolves when all sessions closed. */
  close(): Promise<void>;
};

/**
 * Server interceptor, inside `errorInterceptor`: a call this service made to another plane that
 * failed in transport (the peer down, restarting or dying mid-call) is the contract's 503
 * `unavailable` (504 on a deadline), as it is when the gateway itself cannot reach a plane.
 * Without it, `errorInterceptor` sees a ConnectError with no detail and answers `internal`: a
 * request needing a plane that was down answered 500.
 */
export const peerOutageInterceptor: Interceptor = (next) => async (req) => {
  try {
    return await next(req);
  } catch (error) {
    throw peerOutage(error) ?? error;
  }
};

/** How long a gRPC health answer is reused: the kubelet's probes and any caller cost one check a second. */
const GRPC_HEALTH_REUSE_MS = 1_000;

/**
 * Builds (without listening) the RPC server of a service: its routes plus the shared
 * HealthService, with the request-context and error interceptors every service needs, and for
 * the gRPC ecosystem `grpc.health.v1.Health` (open: see grpc-health.ts) and server reflection
 * (behind the service token, as every other RPC). connect's router answers the gRPC protocol beside
 * Connect on the same port, so a `@grpc/grpc-js` peer, grpcurl or a kubelet probe reach it too.
 */
export function createConnectServer(options: {
  routes: (router: ConnectRouter) => void;
  logger: Logger;
  checks: ReadinessCheck[];
  /** Interceptors of the service's own, run inside the shared ones. */
  interceptors?: Interceptor[];
  /** Where the calls served are counted (`rpc_server_calls_total`), outermost: as callers saw them. */
  registry?: Registry;
  /** Connections older than this (give or take a tenth) are closed gracefully; 0 keeps them. */
  maxConnectionAgeMs?: number;
  /** The keys the callers' service tokens are verified with: a call without a valid one is refused. */
  tokens: ServiceTokenVerifier;
  /** Who may call which RPC (the service's table beside its routes): anyone else is refused. */
  callers: CallerTable;
}): ConnectServer {
  const metrics = options.registry ? [rpcMetricsInterceptor(options.registry)] : [];
  const closing = new AbortController();
  // On HTTP/2's stream events: no compatibility-API request/response objects per call.
  const handler = connectH2Handler({
    ...WIRE_READ_OPTIONS,
    routes(router) {
      router.service(HealthService, {
        async check() {
          return runReadiness(options.checks);
        },
      });
      options.routes(router);
      // Every service registered, these two included: read at the first call, once all are.
      const served = () => [...new Set(router.handlers.map((handler) => handler.service))];
      let names: ReadonlySet<string> | null = null;
      serveGrpcReflection(router, served, [ErrorDetailSchema.file]);
      serveGrpcHealth(router, {
        readiness: reusedReadiness(options.checks, GRPC_HEALTH_REUSE_MS),
        services: () => {
          names ??= new Set(served().map((service) => service.typeName));
          return names;
        },
        closing: closing.signal,
        interceptors: [...metrics, requestContextInterceptor(options.logger), errorInterceptor],
      });
    },
    interceptors: [
      ...metrics,
      traceServerInterceptor,
      requireServiceTokens(options.tokens, options.callers, options.logger),
      requestContextInterceptor(options.logger),
      errorInterceptor,
      peerOutageInterceptor,
      ...(options.interceptors ?? []),
    ],
    onError: (error, failed) =>
      options.logger.error(
        { err: error, rpc: `${failed.service.typeName}/${failed.method.name}` },
        "rpc handler failed",
      ),
  });
  const server = http2.createServer();
  server.on("stream", handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  const maxAge = options.maxConnectionAgeMs ?? 0;
  server.on("session", (session) => {
    sessions.add(session);
    // A caller keeps one HTTP/2 connection per replica for as long as it can: replicas added
    // later would get nothing of it. Closing old connections (GOAWAY: calls in flight finish, the
    // next ones open a new connection, through whatever now balances) spreads calls again. The
    // jitter keeps connections opened together from all closing together.
    const aged = maxAge > 0 ? setTimeout(() => session.close(), maxAge * (0.9 + Math.random() * 0.2)) : null;
    aged?.unref();
    session.on("close", () => {
      if (aged) clearTimeout(aged);
      sessions.delete(session);
    });
  });
  return {
    server,
    close() {
      // Health turns NOT_SERVING and its Watch streams end, so that the sessions can close.
      closing.abort();
      return new Promise((resolve) => {
        server.close(() => resolve());
        for (const session of sessions) session.close();
      });
    },
  };
}

/** Listens and resolves with the bound port (0 picks a free one, as tests do). */
export function listen(
  server: { listen(port: number, host: string, cb: () => void): unknown; address(): unknown },
  port: number,
  host: string,
): Promise<number> {
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const address = server.address() as { port: number } | null;
      resolve(address?.port ?? port);
    });
  });
}
