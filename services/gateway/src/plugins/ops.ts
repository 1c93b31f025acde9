import type { Server } from "node:http";
import {
  createOpsServer,
  METRICS,
  metricConfig,
  PLANES,
  type ReadinessCheck,
  type Registry,
} from "@evalp/kit";
import type { FastifyInstance } from "fastify";
import { Histogram } from "prom-client";
import type { Upstreams } from "../upstream.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The gateway's ops server (`/healthz`, `/readyz`, `/metrics`), listened on OPS_PORT by its runner. */
    ops: Server;
  }
}

/**
 * The gateway's ops server (OPS_PORT, not the public port: neither readiness, which asks every
 * plane, nor metrics are for the internet): `/healthz`, `/readyz` and `/metrics` with a
 * request-duration histogram by route and status. A gateway is ready while it serves: Redis or a
 * plane that is down makes the requests that need it answer 503, and `/readyz` says `degraded`
 * with what it misses, but a balancer keeps every gateway (taking them all out would turn a
 * partial outage into a total one). The public port keeps `/healthz` for load balancers.
 */
export function registerOps(
  app: FastifyInstance,
  deps: { upstreams: Upstreams; checks: ReadinessCheck[]; registry: Registry },
): Server {
  const { registry } = deps;
  const duration = new Histogram({
    ...metricConfig(METRICS.httpRequestDuration),
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  app.addHook("onResponse", async (request, reply) => {
    duration.observe(
      {
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        status: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    );
  });

  const checks: ReadinessCheck[] = [
    ...deps.checks.map((check) => ({ ...check, degrades: true })),
    ...PLANES.map((plane) => ({
      name: plane,
      degrades: true,
      check: async () => {
        const answer = await deps.upstreams.health[plane].check({}, { timeoutMs: 2_000 });
        if (!answer.ready) throw new Error(`${plane} not ready`);
      },
    })),
  ];
  app.get("/healthz", { schema: { hide: true } }, async () => ({ status: "ok" }));
  const ops = createOpsServer({ registry, checks });
  // Draining starts with the ops server: readiness answers 503 (then nothing) before the public
  // port stops taking requests, so balancers move away first.
  app.addHook("preClose", async () => {
    await new Promise<void>((resolve) => {
      ops.close(() => resolve());
      ops.closeAllConnections();
    });
  });
  return ops;
}
