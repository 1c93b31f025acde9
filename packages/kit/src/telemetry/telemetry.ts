import { createRequire } from "node:module";
import { type Context, context, createContextKey, propagation, SpanKind, trace } from "@opentelemetry/api";
import type * as AsyncHooksContext from "@opentelemetry/context-async-hooks";
import type * as Core from "@opentelemetry/core";
import type * as OtlpHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as InstrumentationApi from "@opentelemetry/instrumentation";
import type * as HttpInstrumentation from "@opentelemetry/instrumentation-http";
import type * as IORedisInstrumentation from "@opentelemetry/instrumentation-ioredis";
import type * as PgInstrumentation from "@opentelemetry/instrumentation-pg";
import type * as UndiciInstrumentation from "@opentelemetry/instrumentation-undici";
import type * as Resources from "@opentelemetry/resources";
import type * as SdkTrace from "@opentelemetry/sdk-trace";
import type { Config } from "../config/config.js";
import { type Conventions, oldHttpAttributes, parseStabilityOptIn, resourceAttributes } from "./semconv.js";

/*
 * Tracing (docs/operations.md#tracing). Nothing of the OpenTelemetry SDK is loaded unless
 * OTEL_EXPORTER_OTLP_ENDPOINT is set: the SDK and the instrumentations are required lazily here,
 * and the rest of the platform speaks only to `@opentelemetry/api`, whose calls do nothing while
 * no provider is registered. So a process without an endpoint pays for no SDK, no patching and
 * no export.
 *
 * The platform is ESM, and the instrumentations of pg, ioredis and http patch a module as it is
 * loaded: they only see modules loaded after their hooks are in place. A process's `main.ts`
 * therefore calls `preloadTelemetry` first and imports the rest of the process afterwards; the
 * module hooks are import-in-the-middle's synchronous ones (`module.registerHooks`, in the
 * application's thread), limited to the modules instrumented. Fastify (through its diagnostics
 * channel) and undici (through its own) are instrumented wherever they were loaded, and the spans
 * of the platform's own paths (Connect RPCs, the outbox relay, the event consumer, webhook
 * attempts, realtime frames) are made explicitly, so they exist even where the module hooks came
 * too late (the tests, which compose every process inside one).
 */

const require = createRequire(import.meta.url);

/** The span attribute naming the process a span was made in (several share one Node process in tests). */
export const SERVICE_ATTRIBUTE = "evalp.service";
const SERVICE_KEY = createContextKey("evalp.service");

/** The settings tracing reads. */
export type TelemetryConfig = Pick<
  Config,
  "OTEL_EXPORTER_OTLP_ENDPOINT" | "OTEL_SERVICE_NAME" | "OTEL_BSP_SCHEDULE_DELAY"
> &
  Partial<
    Pick<
      Config,
      | "OTEL_RESOURCE_ATTRIBUTES"
      | "OTEL_SEMCONV_STABILITY_OPT_IN"
      | "K8S_POD_NAME"
      | "K8S_NAMESPACE_NAME"
      | "K8S_NODE_NAME"
    >
  >;

/** The platform's version, the `service.version` of its spans (every package is released together). */
const PLATFORM_VERSION = (require("../../package.json") as { version: string }).version;

/** A process's hold on the tracing of its Node process. */
export type Telemetry = {
  /** Lets go; the last holder exports what is pending and stops tracing. */
  release(): Promise<void>;
};

type Running = { holders: number; stop(): Promise<void> };

/**
 * One tracer provider per Node process, however many of the platform's processes it runs (a
 * provider's resource is fixed: its `service.name` is the first process's, or
 * OTEL_SERVICE_NAME). Each span says which process made it in `evalp.service`.
 */
let running: Running | null = null;
/** The instrumentations, created once: by `preloadTelemetry` before the app loads, or at start. */
let instrumented: Instrumented | null = null;

type Instrumented = {
  /** Points the instrumentations at the provider (those made before it existed see none). */
  use(provider: SdkTrace.TracerProvider): void;
  disable(): void;
};

/** The names the spans carry (semconv.ts), chosen by the provider's OTEL_SEMCONV_STABILITY_OPT_IN. */
let conventions: Conventions = parseStabilityOptIn(undefined);

/** The attribute names this Node process's spans carry, per domain (`OTEL_SEMCONV_STABILITY_OPT_IN`). */
export function semanticConventions(): Conventions {
  return conventions;
}

/** Whether spans are being recorded in this Node process (the platform's own tracing skips its work otherwise). */
export function tracingActive(): boolean {
  return running !== null;
}

/**
 * Installs the instrumentations' module hooks before the process's modules are loaded, when an
 * endpoint is set (`main.ts` calls it first, then imports the rest). Does nothing otherwise.
 */
export function preloadTelemetry(env: NodeJS.ProcessEnv = process.env): void {
  if (!env.OTEL_EXPORTER_OTLP_ENDPOINT || instrumented) return;
  const hooks = require("import-in-the-middle/register-hooks.mjs") as {
    register(options: { include: string[] }): void;
    supportsSyncHooks(): boolean;
  };
  if (hooks.supportsSyncHooks()) hooks.register({ include: [...HOOKED_MODULES] });
  instrumented = instrument();
}

/** The modules whose loading the instrumentations must see (http for Fastify's server and the ops servers). */
const HOOKED_MODULES = ["pg", "pg-pool", "ioredis", "http", "https", "node:http", "node:https"];

/**
 * Starts tracing for a process named `name` when OTEL_EXPORTER_OTLP_ENDPOINT is set, and returns
 * its hold on it (release it at shutdown); null, having loaded nothing, when it is not.
 */
export function startTelemetry(config: TelemetryConfig, name: string): Telemetry | null {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return null;
  running ??= startProvider(config, endpoint, name);
  running.holders += 1;
  let released = false;
  return {
    async release() {
      if (released || !running) return;
      released = true;
      running.holders -= 1;
      if (running.holders > 0) return;
      const stopping = running;
      running = null;
      await stopping.stop();
    },
  };
}

/**
 * Runs `work` as the process `name`: spans started in it, and in everything it starts (servers
 * listening, consumers, timers: they keep the context they were made in), say so.
 */
export function inService<T>(name: string, work: () => T): T {
  return context.with(context.active().setValue(SERVICE_KEY, name), work);
}

function startProvider(config: TelemetryConfig, endpoint: string, name: string): Running {
  const { TracerProvider, BatchSpanProcessor } = require("@opentelemetry/sdk-trace") as typeof SdkTrace;
  const { OTLPTraceExporter } = require("@opentelemetry/exporter-trace-otlp-http") as typeof OtlpHttp;
  const { AsyncLocalStorageContextManager } =
    require("@opentelemetry/context-async-hooks") as typeof AsyncHooksContext;
  const { W3CTraceContextPropagator } = require("@opentelemetry/core") as typeof Core;
  const { defaultResource, resourceFromAttributes } = require("@opentelemetry/resources") as typeof Resources;

  conventions = parseStabilityOptIn(config.OTEL_SEMCONV_STABILITY_OPT_IN);
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  const provider = new TracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes(resourceAttributes(config, name, PLATFORM_VERSION)),
    ),
    spanProcessors: [
      serviceAttribution(name),
      ...(conventions.http.old ? [oldHttpNames()] : []),
      new BatchSpanProcessor({
        // The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT means it for every signal.
        exporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, "")}/v1/traces` }),
        scheduledDelayMillis: config.OTEL_BSP_SCHEDULE_DELAY,
      }),
    ],
  });
  trace.setGlobalTracerProvider(provider);
  instrumented ??= instrument();
  instrumented.use(provider);
  return {
    holders: 0,
    async stop() {
      instrumented?.disable();
      instrumented = null;
      await provider.shutdown();
      conventions = parseStabilityOptIn(undefined);
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

/** Stamps every span with the process it was made in: the context's, else the provider's first. */
function serviceAttribution(fallback: string): SdkTrace.SpanProcessor {
  return {
    onStart(span: SdkTrace.Span, parent: Context) {
      if (span.attributes[SERVICE_ATTRIBUTE] !== undefined) return;
      const service = parent.getValue(SERVICE_KEY);
      span.setAttribute(SERVICE_ATTRIBUTE, typeof service === "string" ? service : fallback);
    },
    onEnd() {},
    forceFlush: async () => {},
    shutdown: async () => {},
  };
}

/**
 * Under `http/dup`: copies each HTTP span's current attributes to their older names as the span
 * ends (the instrumentations emit the current names only).
 */
function oldHttpNames(): SdkTrace.SpanProcessor {
  return {
    onStart() {},
    onEnding(span: SdkTrace.Span) {
      const server = span.kind === SpanKind.SERVER;
      span.setAttributes(oldHttpAttributes(span.attributes, server));
    },
    onEnd() {},
    forceFlush: async () => {},
    shutdown: async () => {},
  };
}

/** Paths of the ops servers, probed and scraped all day: no spans. */
const OPS_PATHS = new Set(["/healthz", "/readyz", "/metrics"]);

/**
 * The instrumentations of the libraries the platform uses, bound to the global tracer provider
 * (`use`).
 */
function instrument(): Instrumented {
  const { registerInstrumentations } = require("@opentelemetry/instrumentation") as typeof InstrumentationApi;
  const http = require("@opentelemetry/instrumentation-http") as typeof HttpInstrumentation;
  const undici = require("@opentelemetry/instrumentation-undici") as typeof UndiciInstrumentation;
  const pg = require("@opentelemetry/instrumentation-pg") as typeof PgInstrumentation;
  const ioredis = require("@opentelemetry/instrumentation-ioredis") as typeof IORedisInstrumentation;
  const { FastifyOtelInstrumentation } = require("@fastify/otel") as typeof import("@fastify/otel");
  const instrumentations = [
    new http.HttpInstrumentation({
      ignoreIncomingRequestHook: (request) => OPS_PATHS.has((request.url ?? "").split("?", 1)[0] ?? ""),
    }),
    new undici.UndiciInstrumentation(),
    // Spans for queries only inside a traced operation: the pollers' queries alone are noise.
    new pg.PgInstrumentation({ requireParentSpan: true }),
    new ioredis.IORedisInstrumentation({ requireParentSpan: true }),
    // Fastify announces every instance on a diagnostics channel; each gets the plugin there.
    new FastifyOtelInstrumentation({
      registerOnInitialization: true,
      ignorePaths: (route) => OPS_PATHS.has(route.url),
    }),
  ];
  const disable = registerInstrumentations({ instrumentations });
  return {
    use(provider) {
      for (const instrumentation of instrumentations) instrumentation.setTracerProvider(provider);
    },
    disable,
  };
}
