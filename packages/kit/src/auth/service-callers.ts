import type { DescMethod, DescService } from "@bufbuild/protobuf";

/**
 * Which process may call which RPC of a service, declared by each service next to its routes:
 * the caller's name → the services (every method) or the single methods it may call. A valid
 * service token is not enough: the webhooks process (the one that makes outbound HTTP) holds a
 * key of its own, which may read an environment and its limits, never mint an API key.
 */
export type CallerGrants = Readonly<Record<string, ReadonlyArray<DescService | DescMethod>>>;

/** The grants, looked up per call. */
export type CallerTable = {
  allows(service: string, method: string, caller: string): boolean;
  /** Every RPC and who may call it, for documentation and tests: `pkg.Service/Method` → callers. */
  entries(): ReadonlyMap<string, readonly string[]>;
};

/**
 * Services any caller with a valid token may call: the plane's readiness (the gateway's
 * `/readyz` asks every plane) and gRPC server reflection (the schema, for grpcurl and buf curl).
 */
const OPEN_TO_EVERY_CALLER = new Set([
  "evalp.common.v1.HealthService",
  "grpc.reflection.v1.ServerReflection",
  "grpc.reflection.v1alpha.ServerReflection",
]);

/** Builds a service's table; an RPC granted to nobody is refused to everybody. */
export function callerTable(grants: CallerGrants): CallerTable {
  // Service → method → callers: looked up per call without building a string.
  const allowed = new Map<string, Map<string, Set<string>>>();
  for (const [caller, granted] of Object.entries(grants)) {
    for (const grant of granted) {
      const methods = grant.kind === "service" ? grant.methods : [grant];
      for (const method of methods) {
        const service = allowed.get(method.parent.typeName) ?? new Map<string, Set<string>>();
        allowed.set(method.parent.typeName, service);
        const callers = service.get(method.name) ?? new Set<string>();
        service.set(method.name, callers);
        callers.add(caller);
      }
    }
  }
  return {
    allows: (service, method, caller) =>
      allowed.get(service)?.get(method)?.has(caller) ?? OPEN_TO_EVERY_CALLER.has(service),
    entries: () =>
      new Map(
        [...allowed].flatMap(([service, methods]) =>
          [...methods].map(([method, callers]) => [`${service}/${method}`, [...callers].sort()] as const),
        ),
      ),
  };
}
