import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Counter, collectDefaultMetrics, Registry } from "prom-client";

/** A Prometheus registry per process, with Node's default metrics labelled by service. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

/**
 * Server interceptor: every RPC this replica served, by method and outcome
 * (`rpc_server_calls_total{method="evalp.control.v1.OrganizationService/GetApp",code="ok"}`),
 * so that how calls spread over a service's replicas can be read off each one.
 */
export function rpcMetricsInterceptor(registry: Registry): Interceptor {
  const calls = new Counter({
    name: "rpc_server_calls_total",
    help: "RPCs served, by method and code",
    labelNames: ["method", "code"],
    registers: [registry],
  });
  // One child counter per method and code, made once: a call costs a map lookup, not a label hash.
  const children = new Map<string, { inc(): void }>();
  const count = (method: DescMethod, code: string) => {
    const key = `${method.parent.typeName}/${method.name}\n${code}`;
    let child = children.get(key);
    if (!child) {
      child = calls.labels({ method: `${method.parent.typeName}/${method.name}`, code });
      children.set(key, child);
    }
    child.inc();
  };
  return (next) => async (req) => {
    try {
      const res = await next(req);
      count(req.method, "ok");
      return res;
    } catch (error) {
      count(req.method, error instanceof ConnectError ? Code[error.code] : "unknown");
      throw error;
    }
  };
}
