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
  return (next) => async (req) => {
    const method = `${req.service.typeName}/${req.method.name}`;
    try {
      const res = await next(req);
      calls.inc({ method, code: "ok" });
      return res;
    } catch (error) {
      calls.inc({ method, code: error instanceof ConnectError ? Code[error.code] : "unknown" });
      throw error;
    }
  };
}
