import { createServer, type Server } from "node:http";
import { Counter, Gauge, type Registry } from "prom-client";
import { METRICS, metricConfig } from "../telemetry/metric-catalog.js";
import { type Readiness, type ReadinessCheck, readinessBody, runReadiness } from "./readiness.js";

const READINESS_REUSE_MS = 1_000;

/**
 * The ops port of a service: `/healthz` (the process is up), `/readyz` (200 while it can serve:
 * `ready`, or `degraded` with the dependencies it misses; 503 when a dependency it cannot serve
 * without is down, or while draining) and `/metrics` (Prometheus text), apart from the RPC port
 * so probes never queue behind application traffic. What readiness finds is a metric too
 * (`readinessMetrics`).
 */
export function createOpsServer(options: { registry: Registry; checks: ReadinessCheck[] }): Server {
  let draining = false;
  const observed = readinessMetrics(options.registry, options.checks, () => readiness());
  // A readiness answer is reused for a second: probes from many balancers cost the dependencies
  // (for the gateway, every plane) one check a second.
  let last: { at: number; readiness: Promise<Readiness> } | null = null;
  const readiness = () => {
    if (!last || performance.now() - last.at > READINESS_REUSE_MS) {
      const answer = runReadiness(options.checks);
      void answer.then(observed);
      last = { at: performance.now(), readiness: answer };
    }
    return last.readiness;
  };
  const server = createServer((req, res) => {
    const send = (status: number, body: unknown, type = "application/json") => {
      res.writeHead(status, { "content-type": type });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET") return send(405, { status: "method not allowed" });
    if (path === "/healthz") return send(200, { status: "ok" });
    if (path === "/readyz") {
      if (draining) return send(503, { status: "draining" });
      void readiness().then((answer) => {
        const { status, body } = readinessBody(answer);
        send(status, body);
      });
      return;
    }
    if (path === "/metrics") {
      void options.registry.metrics().then((text) => send(200, text, options.registry.contentType));
      return;
    }
    return send(404, { status: "not found" });
  });
  // A draining process reports not-ready so load balancers stop sending it work.
  server.on("close", () => {
    draining = true;
  });
  return server;
}

/** What a readiness answer says, in a word: `ready`, `degraded` (ready, missing some) or `not_ready`. */
function statusOf({ ready, failing }: Readiness): string {
  if (!ready) return "not_ready";
  return failing.length > 0 ? "degraded" : "ready";
}

/**
 * Readiness as metrics, from every answer the ops server computes (the kubelet's probes, every
 * few seconds, and each scrape): `evalp_ready` (1 while `/readyz` answers 200, degraded or not),
 * `evalp_dependency_up{dependency}` (1 while that check passes) and
 * `evalp_readiness_changes_total` (each time the status changed between ready, degraded and not
 * ready): a flapping process shows there even when no scrape caught it not ready. Returns what
 * records an answer.
 */
function readinessMetrics(
  registry: Registry,
  checks: ReadinessCheck[],
  current: () => Promise<Readiness>,
): (answer: Readiness) => void {
  let status: string | null = null;
  // A scrape asks for a current answer (reused within the second, as probes are).
  const collect = async () => {
    await current();
  };
  const ready = new Gauge({ ...metricConfig(METRICS.ready), registers: [registry], collect });
  const up = new Gauge({ ...metricConfig(METRICS.dependencyUp), registers: [registry], collect });
  const changes = new Counter({ ...metricConfig(METRICS.readinessChanges), registers: [registry], collect });
  return (answer) => {
    ready.set(answer.ready ? 1 : 0);
    for (const check of checks)
      up.set({ dependency: check.name }, answer.failing.includes(check.name) ? 0 : 1);
    const now = statusOf(answer);
    if (status !== null && status !== now) changes.inc();
    status = now;
  };
}
