import http2 from "node:http2";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { HealthService } from "@evalp/proto/common/v1/health";
import type { Logger } from "pino";
import { WIRE_READ_OPTIONS } from "./connect-client.js";
import { errorInterceptor } from "./connect-errors.js";
import { peerOutage } from "./peer-outage.js";
import { type ReadinessCheck, runReadiness } from "./readiness.js";
import { requestContextInterceptor } from "./request-context.js";

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

/**
 * Builds (without listening) the RPC server of a service: its routes plus the shared
 * HealthService, with the request-context and error interceptors every service needs.
 */
export function createConnectServer(options: {
  routes: (router: ConnectRouter) => void;
  logger: Logger;
  checks: ReadinessCheck[];
}): ConnectServer {
  const handler = connectNodeAdapter({
    ...WIRE_READ_OPTIONS,
    routes(router) {
      router.service(HealthService, {
        async check() {
          return runReadiness(options.checks);
        },
      });
      options.routes(router);
    },
    interceptors: [requestContextInterceptor(options.logger), errorInterceptor, peerOutageInterceptor],
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  return {
    server,
    close() {
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
