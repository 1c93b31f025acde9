import type { DescMethod } from "@bufbuild/protobuf";
import { MethodOptions_IdempotencyLevel } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Transport } from "@connectrpc/connect";
import { createH2Transport, type H2Transport, neverReached, transportFailure } from "@evalp/connect-h2";
import type { Registry } from "prom-client";
import { type ServiceSigningKey, signServiceTokens } from "../auth/service-tokens.js";
import { type ServiceKeyConfig, serviceSigningKey } from "../config/config.js";
import { createEndpointSet, type Endpoint, type EndpointSet } from "../config/service-endpoints.js";
import { rpcClientMetrics } from "../telemetry/metrics.js";
import { traceClientInterceptor } from "./rpc-tracing.js";

/**
 * Who calls another plane: the process's name, its own private key its service tokens are
 * signed with, and the registry its calls are counted in (`rpc_client_*`), when it has one.
 */
export type ServiceCaller = { name: string; key: ServiceSigningKey; metrics?: Registry };

/** The caller a process of `name` is, from its configuration. */
export function serviceCaller(config: ServiceKeyConfig, name: string, metrics?: Registry): ServiceCaller {
  return { name, key: serviceSigningKey(config, name), ...(metrics && { metrics }) };
}

/**
 * How deep a message may nest on the wire between the planes, both ends alike. Free-form JSON
 * (template contents, profiles, answers) travels as google.protobuf.Struct, two messages per
 * level of nesting, and protobuf's default of 100 refused what the gateway accepts (200 levels
 * of JSON): a scorecard expression of depth 25 failed to decode, a 500. Every Connect server
 * and client of the platform uses these.
 */
export const WIRE_READ_OPTIONS = {
  binaryOptions: { recursionLimit: 512 },
  jsonOptions: { recursionLimit: 512 },
} as const;

/** How often a service's host name is resolved again, to find the replicas that came and went. */
const RESOLVE_EVERY_MS = 5_000;
/** An HTTP/2 connection to a replica that carried no call for this long is closed. */
const IDLE_CONNECTION_MS = 60_000;

/**
 * A Connect transport to every replica of another service (HTTP/2, one connection per
 * replica, the hop's own lean client: `createH2Transport` of `@evalp/connect-h2`), connected on
 * its first call so that the peer's address may be settled after this service is built
 * (services that call each other start in any order). The address lists the replicas or names
 * a host that resolves to them (`createEndpointSet`); calls go round robin
 * over the healthy ones. A call that failed in transport marks its replica down for a while and
 * is tried on another replica, within the same deadline, when it provably never reached the
 * first (the connection or the stream was refused) or when its method declares no side effects
 * (`option idempotency_level = NO_SIDE_EFFECTS`): a read is answered although a replica died
 * under it, and a write is never run twice. Share one per peer service. Its calls carry the
 * caller's tokens addressed to `peer` (the service's name), which the service alone accepts.
 */
export function createServiceTransport(
  peer: string,
  address: () => string,
  timeoutMs: number,
  caller: ServiceCaller,
): Transport {
  let replicas: EndpointSet<H2Transport> | undefined;
  const tokens = signServiceTokens(caller, peer);
  const connected = () => {
    replicas ??= createEndpointSet(address(), {
      create: (baseUrl) =>
        createH2Transport({
          baseUrl,
          idleConnectionMs: IDLE_CONNECTION_MS,
          defaultTimeoutMs: timeoutMs,
          interceptors: [tokens, traceClientInterceptor],
          ...WIRE_READ_OPTIONS,
        }),
      // A replica gone from the service's name: its connection is closed (its calls finish).
      retire: (transport) => transport.close(),
      refreshMs: RESOLVE_EVERY_MS,
    });
    return replicas;
  };

  /** Runs `attempt` on one replica after another as the rules above allow. */
  async function spread<R>(
    method: DescMethod,
    signal: AbortSignal | undefined,
    timeout: number | undefined,
    attempt: (transport: H2Transport, remainingMs: number) => Promise<R>,
  ): Promise<R> {
    const set = connected();
    const looking = set.refresh();
    if (looking) await looking;
    const deadline = performance.now() + (timeout ?? timeoutMs);
    const tried: Endpoint<H2Transport>[] = [];
    // Made only when a call fails: an error's stack costs a call more than its transport does.
    let failure: unknown;
    for (;;) {
      const remainingMs = Math.round(deadline - performance.now());
      const endpoint = remainingMs > 0 && !signal?.aborted ? set.pick(tried) : undefined;
      if (!endpoint)
        throw failure ?? new ConnectError("no replica of the service is known", Code.Unavailable);
      tried.push(endpoint);
      try {
        const result = await attempt(endpoint.client, remainingMs);
        set.markUp(endpoint);
        return result;
      } catch (error) {
        // The caller gave up (its own abort is no fault of the replica), or the replica answered.
        if (signal?.aborted || transportFailure(error) !== "unavailable") throw error;
        set.markDown(endpoint);
        failure = error;
        if (!neverReached(error) && method.idempotency !== MethodOptions_IdempotencyLevel.NO_SIDE_EFFECTS) {
          throw error;
        }
      }
    }
  }

  // Observed around the replicas: one call, its outcome and its duration as the caller saw them.
  const observe = caller.metrics
    ? rpcClientMetrics(caller.metrics)
    : <R>(_: DescMethod, call: () => Promise<R>) => call();
  return {
    unary: (method, signal, timeout, header, input, contextValues) =>
      observe(method, () =>
        spread(method, signal, timeout, (transport, remainingMs) =>
          transport.unary(method, signal, remainingMs, header, input, contextValues),
        ),
      ),
    // A stream's messages cannot be sent again: one replica, however the call ends. A stream
    // asked for with no deadline (a timeout of 0 or less: a live feed, open as long as its
    // caller is) keeps none; only finding its replica takes the default time.
    stream: (method, signal, timeout, header, input, contextValues) => {
      const unbounded = timeout !== undefined && timeout <= 0;
      return observe(method, () =>
        spread(
          { ...method, idempotency: MethodOptions_IdempotencyLevel.IDEMPOTENCY_UNKNOWN },
          signal,
          unbounded ? undefined : timeout,
          (transport, remainingMs) =>
            transport.stream(method, signal, unbounded ? 0 : remainingMs, header, input, contextValues),
        ),
      );
    },
  };
}
