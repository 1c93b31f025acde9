import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { Receiver } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { startCheckedReceiver } from "./support/event-catalog.js";
import { createTenant } from "./support/fixtures.js";
import { type ExportedSpan, SPAN_KIND, startOtlpReceiver } from "./support/otlp.js";
import { type Stack, startStack } from "./support/stack.js";
import { createEndpoint, importSubjects } from "./support/webhooks.js";

let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let stack: Stack;
let api: ApiClient;
let receiver: Receiver;
const lines: string[] = [];

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  stack = await startStack(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
      // Spans reach the receiver within a moment of ending, rather than every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: "50",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=traced,team=eval%20ops%2C%20core",
      K8S_POD_NAME: "gateway-7d9f8-x2k4q",
      K8S_NAMESPACE_NAME: "evalp",
      K8S_NODE_NAME: "node-1",
      WEBHOOK_ALLOW_PRIVATE: "true",
    },
    { logLines: lines },
  );
  api = apiClient(stack.urls);
  receiver = await startCheckedReceiver(api);
});
afterAll(async () => {
  await receiver?.close();
  await stack?.close();
  await otlp?.close();
});

/** The span and its ancestors, nearest first, as far as they were exported. */
function ancestry(spans: ExportedSpan[], span: ExportedSpan): ExportedSpan[] {
  const byId = new Map(spans.map((candidate) => [candidate.spanId, candidate]));
  const chain = [span];
  for (let parent = byId.get(span.parentSpanId ?? ""); parent; parent = byId.get(parent.parentSpanId ?? "")) {
    chain.push(parent);
  }
  return chain;
}

describe("traces (docs/operations.md#tracing)", () => {
  it("follow a subject import from the gateway through control, the outbox and the webhooks consumer to the delivery attempt", async () => {
    const tenant = await createTenant(api);
    const endpoint = await createEndpoint(api, tenant, {
      url: `${receiver.url}/traced`,
      event_types: ["subject.imported"],
    });
    await importSubjects(api, tenant, ["traced-1", "traced-2"]);

    const { gateway, rpc, publish, consume, attempt, spans } = await vi.waitFor(
      () => {
        const spans = otlp.spans();
        const attempt = spans.find(
          (span) =>
            span.name === "webhook attempt" &&
            span.attributes["evalp.webhook.endpoint_id"] === endpoint.id &&
            span.attributes["evalp.webhook.outcome"] === "succeeded",
        );
        expect(attempt, "the delivery attempt's span").toBeDefined();
        const chain = ancestry(spans, attempt as ExportedSpan);
        const found = {
          attempt: attempt as ExportedSpan,
          consume: chain.find((span) => span.kind === SPAN_KIND.consumer),
          publish: chain.find((span) => span.kind === SPAN_KIND.producer),
          rpc: chain.find(
            (span) => span.kind === SPAN_KIND.server && span.attributes["evalp.service"] === "control",
          ),
          // Fastify's span of the request (the http instrumentation's would be its parent where it
          // patched node:http before the gateway loaded it, as a process's main.ts has it do).
          gateway: chain.find((span) => span.scope === "@fastify/otel" && span.name === "request"),
        };
        // Every span of the chain is exported, up to its root (the test client's own request:
        // undici is instrumented in this process too, and the gateway continues its trace).
        expect(chain.at(-1)?.parentSpanId).toBeUndefined();
        for (const [name, span] of Object.entries(found)) expect(span, name).toBeDefined();
        return { ...(found as Record<keyof typeof found, ExportedSpan>), spans };
      },
      { timeout: 15_000, interval: 100 },
    );

    // One trace, in the order the work happened: each span descends from the one before.
    const chain = ancestry(spans, attempt);
    const order = [attempt, consume, publish, rpc, gateway].map((span) => chain.indexOf(span));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(new Set([gateway, rpc, publish, consume, attempt].map((span) => span.traceId)).size).toBe(1);

    expect(gateway).toMatchObject({
      kind: SPAN_KIND.server,
      attributes: {
        "evalp.service": "gateway",
        "http.request.method": "POST",
        "http.route": expect.stringContaining("/subjects/batch"),
      },
    });
    expect(rpc.attributes).toMatchObject({
      "rpc.system.name": "connectrpc",
      "rpc.method": expect.stringMatching(/^evalp\.control\.[\w.]+\/\w+$/),
    });
    // The older experimental names only under OTEL_SEMCONV_STABILITY_OPT_IN=rpc/dup.
    expect(rpc.attributes).not.toHaveProperty("rpc.system");
    expect(rpc.attributes).not.toHaveProperty("rpc.service");
    expect(publish.attributes).toMatchObject({
      "evalp.service": "control",
      "messaging.system": "nats",
      "messaging.operation.type": "send",
      "messaging.operation.name": "publish",
      "messaging.destination.name": expect.stringMatching(/\.subject\.imported$/),
    });
    expect(consume).toMatchObject({
      name: "process subject.imported",
      attributes: {
        "evalp.service": "webhooks",
        "messaging.system": "nats",
        "messaging.operation.type": "process",
        "messaging.destination.name": publish.attributes["messaging.destination.name"],
        "messaging.consumer.group.name": "webhooks",
      },
    });
    expect(attempt.attributes).toMatchObject({
      "evalp.service": "webhooks",
      "evalp.webhook.attempt": 1,
      "http.response.status_code": 204,
    });
    // The gateway's client span of the call is the control server span's parent.
    const caller = spans.find((span) => span.spanId === rpc.parentSpanId);
    expect(caller).toMatchObject({
      kind: SPAN_KIND.client,
      attributes: {
        "evalp.service": "gateway",
        "rpc.system.name": "connectrpc",
        "rpc.method": rpc.attributes["rpc.method"],
        "server.address": expect.any(String),
        "server.port": expect.any(Number),
      },
    });
    // The gateway's request span speaks the stable HTTP conventions, not the older names.
    expect(gateway.attributes).toMatchObject({ "http.response.status_code": expect.any(Number) });
    expect(gateway.attributes).not.toHaveProperty("http.method");
    expect(gateway.attributes).not.toHaveProperty("http.status_code");

    // Log lines written under a span carry its trace: control's line for the RPC is in this trace.
    const logged = lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((line) => line.trace_id === gateway.traceId);
    expect(logged.length).toBeGreaterThan(0);
    expect(logged.every((line) => typeof line.span_id === "string")).toBe(true);
  });

  it("export a span of the process that made it: each names its own service", () => {
    const services = new Set(otlp.spans().map((span) => span.attributes["evalp.service"]));
    for (const service of ["gateway", "control", "webhooks"]) expect(services).toContain(service);
    // One provider for the Node process: the resource's `service.name` is the first process's.
    expect(new Set(otlp.spans().map((span) => span.resourceService)).size).toBe(1);
  });

  it("carry a resource that says where they come from: OTEL_RESOURCE_ATTRIBUTES, the pod, the version and the instance", () => {
    const [span] = otlp.spans();
    expect(span?.resource).toMatchObject({
      "service.name": span?.resourceService,
      "service.version": expect.stringMatching(/^\d+\.\d+\.\d+/),
      "service.instance.id": expect.stringMatching(/^[0-9a-f-]{36}$/),
      "deployment.environment.name": "traced",
      team: "eval ops, core",
      "k8s.pod.name": "gateway-7d9f8-x2k4q",
      "k8s.namespace.name": "evalp",
      "k8s.node.name": "node-1",
      "telemetry.sdk.language": "nodejs",
    });
    expect(["gateway", "control", "platform", "interview", "webhooks"]).toContain(span?.resourceService);
  });

  it("see the queries of a process started as main.ts starts one: ESM modules are instrumented when the hooks come first", async () => {
    const separate = await startOtlpReceiver();
    try {
      const script = fileURLToPath(new URL("./support/preloaded-process.ts", import.meta.url));
      await promisify(execFile)(process.execPath, [script, stack.config.DATABASE_URL], {
        env: { ...process.env, OTEL_EXPORTER_OTLP_ENDPOINT: separate.url, OTEL_BSP_SCHEDULE_DELAY: "10" },
      });
      const spans = separate.spans();
      const work = spans.find((span) => span.name === "preloaded work");
      const query = spans.find(
        (span) => span.scope === "@opentelemetry/instrumentation-pg" && span.name.startsWith("pg.query"),
      );
      expect(work?.resourceService).toBe("preloaded");
      expect(query).toMatchObject({ traceId: work?.traceId, parentSpanId: work?.spanId });
    } finally {
      await separate.close();
    }
  });
});
