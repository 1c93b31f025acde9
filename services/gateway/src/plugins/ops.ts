import { createMetricsRegistry, type ReadinessCheck, runReadiness } from "@evalp/kit";
import type { FastifyInstance } from "fastify";
import { Histogram } from "prom-client";
import { PLANES, type Upstreams } from "../upstream.js";

/**
 * `/healthz` (the process is up), `/readyz` (Redis and every upstream service answer), and
 * `/metrics` with a request-duration histogram by route and status.
 */
export function registerOps(
  app: FastifyInstance,
  deps: { upstreams: Upstreams; checks: ReadinessCheck[] },
): void {
  const registry = createMetricsRegistry("gateway");
  const duration = new Histogram({
    name: "http_request_duration_seconds",
    help: "Gateway request duration by method, route and status",
    labelNames: ["method", "route", "status"],
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
    ...deps.checks,
    ...PLANES.map((plane) => ({
      name: plane,
      check: async () => {
        const answer = await deps.upstreams.health[plane].check({}, { timeoutMs: 2_000 });
        if (!answer.ready) throw new Error(`${plane} not ready`);
      },
    })),
  ];

  const ops = { config: { rateLimit: false }, schema: { hide: true } } as const;
  app.get("/healthz", ops, async () => ({ status: "ok" }));
  app.get("/readyz", ops, async (_request, reply) => {
    const { ready, failing } = await runReadiness(checks);
    return reply.code(ready ? 200 : 503).send(ready ? { status: "ready" } : { status: "not_ready", failing });
  });
  app.get("/metrics", ops, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
