import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from "prom-client";
import { METRICS, metricConfig } from "./metric-catalog.js";

/** A process's metrics registry, as the planes pass it around without depending on prom-client. */
export type { Registry };

/**
 * How often the event loop's delay is sampled (`nodejs_eventloop_lag_*`), in ms. prom-client's
 * default, 10 ms, wakes every process 100 times a second, busy or idle: about 7 ms of CPU a second
 * per process on the bench's machine, more than the rest of an idle gateway. At 100 ms a stall
 * long enough to matter is still seen (the delay is measured, not rounded to the interval).
 */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** A Prometheus registry per process, with Node's default metrics labelled by service. */
export function createMetricsRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
  return registry;
}

/** Latency buckets (seconds) of calls between the planes and to webhook receivers: 1 ms to 10 s. */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The metric `name` of a registry, made by `create` the first time: the parts of a process that
 * share a metric (several clients of one caller, a consumer built again) register it once, as
 * prom-client refuses a second registration of a name.
 */
export function metricOf<M extends Metric>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

/** What a sampled gauge reads at a scrape: one value per label set. */
export type Sample<L extends string> = { labels: Partial<Record<L, string>>; value: number };

/** How long a scrape waits for one source of a sampled gauge (a database or NATS round trip). */
const SAMPLE_TIMEOUT_MS = 2_000;

const sources = new WeakMap<Registry, Map<string, Set<() => Promise<Sample<string>[]> | Sample<string>[]>>>();

/**
 * Adds a source to the gauge `name`, whose values are read from all its sources at each scrape
 * (so a gauge costs nothing between scrapes, and a source that is gone or does not answer in time
 * leaves no stale value: its series is absent from that scrape). Returns how to remove the source.
 */
export function sampledGauge<L extends string>(
  registry: Registry,
  config: { name: string; help: string; labelNames: readonly L[] },
  source: () => Promise<Sample<L>[]> | Sample<L>[],
): () => void {
  let byName = sources.get(registry);
  if (!byName) {
    byName = new Map();
    sources.set(registry, byName);
  }
  let set = byName.get(config.name);
  if (!set) {
    const reading = new Set<() => Promise<Sample<string>[]> | Sample<string>[]>();
    set = reading;
    byName.set(config.name, reading);
    new Gauge({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      registers: [registry],
      async collect() {
        this.reset();
        const read = await Promise.all([...reading].map((each) => withinTimeout(each)));
        for (const sample of read.flat()) this.set(sample.labels, sample.value);
      },
    });
  }
  set.add(source);
  const added = set;
  return () => {
    added.delete(source);
  };
}

/** A source's samples, or none when it fails or does not answer within SAMPLE_TIMEOUT_MS. */
async function withinTimeout(
  source: () => Promise<Sample<string>[]> | Sample<string>[],
): Promise<Sample<string>[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<Sample<string>[]>((resolve) => {
    timer = setTimeout(() => resolve([]), SAMPLE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(source), late]);
  } catch {
    return [];
  } finally {
    clearTimeout(timer);
  }
}

/** Times a call and counts its outcome by method and code. */
export type CallObserver = <R>(method: DescMethod, call: () => Promise<R>) => Promise<R>;

const observers = new WeakMap<Registry, Partial<Record<"server" | "client", CallObserver>>>();

/**
 * `rpc_<side>_calls_total` and `rpc_<side>_duration_seconds` by method
 * (`evalp.control.v1.OrganizationService/GetApp`) and code (`ok`, or the Connect code's name such
 * as `NotFound`), once per registry and side. A stream is timed until its answer starts.
 */
function callObserver(registry: Registry, side: "server" | "client"): CallObserver {
  const known = observers.get(registry) ?? {};
  observers.set(registry, known);
  const existing = known[side];
  if (existing) return existing;
  const definitions =
    side === "server"
      ? { calls: METRICS.rpcServerCalls, duration: METRICS.rpcServerDuration }
      : { calls: METRICS.rpcClientCalls, duration: METRICS.rpcClientDuration };
  const calls = new Counter({ ...metricConfig(definitions.calls), registers: [registry] });
  const duration = new Histogram({
    ...metricConfig(definitions.duration),
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // One pair of children per method and code, made once: a call costs a map lookup, not a label hash.
  const children = new Map<string, { calls: Counter.Internal; duration: Histogram.Internal<string> }>();
  const record = (method: DescMethod, code: string, seconds: number) => {
    const name = `${method.parent.typeName}/${method.name}`;
    const key = `${name}\n${code}`;
    let child = children.get(key);
    if (!child) {
      child = {
        calls: calls.labels({ method: name, code }),
        duration: duration.labels({ method: name, code }),
      };
      children.set(key, child);
    }
    child.calls.inc();
    child.duration.observe(seconds);
  };
  const observe: CallObserver = async (method, call) => {
    const started = performance.now();
    let code = "ok";
    try {
      return await call();
    } catch (error) {
      code = error instanceof ConnectError ? Code[error.code] : "unknown";
      throw error;
    } finally {
      record(method, code, (performance.now() - started) / 1000);
    }
  };
  known[side] = observe;
  return observe;
}

/**
 * Server interceptor: every RPC this replica served, by method and outcome
 * (`rpc_server_calls_total{method="evalp.control.v1.OrganizationService/GetApp",code="ok"}`),
 * so that how calls spread over a service's replicas can be read off each one, and how long
 * each took (`rpc_server_duration_seconds`).
 */
export function rpcMetricsInterceptor(registry: Registry): Interceptor {
  const observe = callObserver(registry, "server");
  return (next) => (req) => observe(req.method, () => next(req));
}

/**
 * The calls a process makes to other planes as it saw them (`rpc_client_calls_total`,
 * `rpc_client_duration_seconds`): one observation per call, however many replicas it was tried on.
 */
export function rpcClientMetrics(registry: Registry): CallObserver {
  return callObserver(registry, "client");
}
