import {
  createMetricsRegistry,
  type Readiness,
  type ReadinessCheck,
  readinessBody,
  runReadiness,
} from "@evalp/kit";
import type { FastifyInstance } from "fastify";
import { Histogram } from "prom-client";
import { PLANES, type Upstreams } from "../upstream.js";

/** A readiness answer is reused this long: probes from many balancers cost the planes one check a second. */
const READINESS_REUSE_MS = 1_000;

/**
 * `/healthz` (the process is up), `/readyz` and `/metrics` with a request-duration histogram by
 * route and status. A gateway is ready while it serves: Redis or a plane that is down makes the
 * requests that need it answer 503, and `/readyz` says `degraded` with what it misses, but a
 * balancer keeps every gateway (taking them all out would turn a partial outage into a total one).
 * While the gateway drains, Fastify answers 503 itself.
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

  const ops = { schema: { hide: true } } as const;
  app.get("/healthz", ops, async () => ({ status: "ok" }));
  let last: { at: number; readiness: Promise<Readiness> } | null = null;
  app.get("/readyz", ops, async (_request, reply) => {
    if (!last || performance.now() - last.at > READINESS_REUSE_MS) {
      last = { at: performance.now(), readiness: runReadiness(checks) };
    }
    const { status, body } = readinessBody(await last.readiness);
    return reply.code(status).send(body);
  });
  app.get("/metrics", ops, async (_request, reply) =>
    reply.type(registry.contentType).send(await registry.metrics()),
  );
}
