import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";
import { type Readiness, type ReadinessCheck, readinessBody, runReadiness } from "./readiness.js";

const READINESS_REUSE_MS = 1_000;

/**
 * The ops port of a service: `/healthz` (the process is up), `/readyz` (200 while it can serve:
 * `ready`, or `degraded` with the dependencies it misses; 503 when a dependency it cannot serve
 * without is down, or while draining) and `/metrics` (Prometheus text), apart from the RPC port
 * so probes never queue behind application traffic.
 */
export function createOpsServer(options: { registry: Registry; checks: ReadinessCheck[] }): Server {
  let draining = false;
  // A readiness answer is reused for a second: probes from many balancers cost the dependencies
  // (for the gateway, every plane) one check a second.
  let last: { at: number; readiness: Promise<Readiness> } | null = null;
  const readiness = () => {
    if (!last || performance.now() - last.at > READINESS_REUSE_MS) {
      last = { at: performance.now(), readiness: runReadiness(options.checks) };
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
