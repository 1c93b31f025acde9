import { setTimeout as sleep } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import {
  Health,
  type HealthCheckResponse,
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from "@evalp/proto/grpc/health/v1/health";
import { notFound } from "../core/errors.js";
import type { Readiness } from "./readiness.js";

/**
 * The service name whose status is SERVING whenever the process answers at all, whatever its
 * dependencies: what liveness and startup probes ask (a process is not restarted because
 * Postgres is down; it is taken out of the balancing by readiness instead).
 */
export const LIVENESS_SERVICE = "liveness";

/** How often a Watch re-reads the status it reports changes of. */
const WATCH_INTERVAL_MS = 5_000;

export type GrpcHealthOptions = {
  /** The process's readiness (reused for a while: Check is open to any caller). */
  readiness: () => Promise<Readiness>;
  /** The services served: each answers as the server does (""). Read at each call. */
  services: () => ReadonlySet<string>;
  /** Aborted when the server starts closing: every status but liveness turns NOT_SERVING, Watches end. */
  closing: AbortSignal;
  /** The only interceptors these calls pass (no service token check: see `serveGrpcHealth`). */
  interceptors: Interceptor[];
  watchIntervalMs?: number;
};

/**
 * Serves `grpc.health.v1.Health` (the gRPC Health Checking Protocol that Kubernetes' `grpc:`
 * probes, grpc-health-probe and gRPC load balancers speak). "" and the name of each service
 * served are SERVING while the process is ready (degraded included, as `/readyz` answers 200)
 * and NOT_SERVING otherwise or once it closes; `liveness` is SERVING while it answers.
 *
 * Registered with interceptors of its own, without the service token check every other RPC
 * passes: the kubelet cannot send a token, and all an answer reveals is up or down.
 */
export function serveGrpcHealth(router: ConnectRouter, options: GrpcHealthOptions): void {
  const interval = options.watchIntervalMs ?? WATCH_INTERVAL_MS;
  /** The status of a service name, or null for a name this server does not know. */
  const statusOf = async (service: string): Promise<ServingStatus | null> => {
    if (service === LIVENESS_SERVICE) return ServingStatus.SERVING;
    if (service !== "" && !options.services().has(service)) return null;
    if (options.closing.aborted) return ServingStatus.NOT_SERVING;
    const { ready } = await options.readiness();
    // Closing may have started while the checks ran.
    return ready && !options.closing.aborted ? ServingStatus.SERVING : ServingStatus.NOT_SERVING;
  };
  const answer = (status: ServingStatus): HealthCheckResponse =>
    create(HealthCheckResponseSchema, { status });
  router.service(
    Health,
    {
      async check(request) {
        const status = await statusOf(request.service);
        // NOT_FOUND, as the protocol says (with the contract's detail, as every error here).
        if (status === null) throw notFound("service", { service: request.service });
        return answer(status);
      },
      async *watch(request, context) {
        const stop = AbortSignal.any([context.signal, options.closing]);
        let sent: ServingStatus | null = null;
        for (;;) {
          // An unknown name may become known: the protocol says to keep watching it.
          const status = (await statusOf(request.service)) ?? ServingStatus.SERVICE_UNKNOWN;
          if (status !== sent) {
            yield answer(status);
            sent = status;
          }
          // A closing server sends its last status and ends the stream, so that it can drain.
          if (stop.aborted) return;
          await sleep(interval, undefined, { signal: stop }).catch(() => undefined);
        }
      },
    },
    { interceptors: options.interceptors },
  );
}
