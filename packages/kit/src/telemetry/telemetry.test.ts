import { once } from "node:events";
import { createServer } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { type Attributes, SpanKind, trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { semanticConventions, startTelemetry, tracingActive } from "./telemetry.js";

const loaded = () =>
  Object.keys(createRequire(import.meta.url).cache).filter((path) =>
    /[\\/]@opentelemetry[\\/](sdk-trace|exporter-trace-otlp-http|instrumentation)[\\/-]/.test(path),
  );

describe("telemetry", () => {
  // First: once an SDK was loaded in this file's process, it stays in the module cache.
  it("starts nothing without OTEL_EXPORTER_OTLP_ENDPOINT: no SDK loaded, no span recorded", () => {
    expect(startTelemetry({ OTEL_BSP_SCHEDULE_DELAY: 5_000 }, "control")).toBeNull();
    expect(tracingActive()).toBe(false);
    expect(loaded()).toEqual([]);
    expect(trace.getTracer("evalp").startSpan("nothing").isRecording()).toBe(false);
  });

  it("with an endpoint, records spans until its last holder lets go", async () => {
    const config = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_BSP_SCHEDULE_DELAY: 5_000 };
    const first = startTelemetry(config, "control");
    const second = startTelemetry(config, "webhooks");
    expect(tracingActive()).toBe(true);
    expect(loaded().length).toBeGreaterThan(0);
    const span = trace.getTracer("evalp").startSpan("something");
    expect(span.isRecording()).toBe(true);
    await first?.release();
    expect(tracingActive()).toBe(true);
    await second?.release();
    expect(tracingActive()).toBe(false);
    expect(trace.getTracer("evalp").startSpan("nothing").isRecording()).toBe(false);
  });

  it("with OTEL_SEMCONV_STABILITY_OPT_IN=http/dup,rpc/dup, gives HTTP spans the older names too as they end", async () => {
    // A collector that takes the span exported at release (nothing listens on a closed port fast).
    const collector = createServer((request, response) => {
      request.resume();
      request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"));
    });
    collector.listen(0, "127.0.0.1");
    await once(collector, "listening");
    const { port } = collector.address() as AddressInfo;
    const telemetry = startTelemetry(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        OTEL_BSP_SCHEDULE_DELAY: 5_000,
        OTEL_SEMCONV_STABILITY_OPT_IN: "http/dup,rpc/dup",
      },
      "gateway",
    );
    try {
      expect(semanticConventions()).toEqual({
        http: { current: true, old: true },
        rpc: { current: true, old: true },
      });
      const span = trace.getTracer("evalp").startSpan("GET", {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": "GET", "url.path": "/v1/apps" },
      });
      span.setAttribute("http.response.status_code", 200);
      span.end();
      // The SDK's span keeps its attributes readable after it ended (what the exporter reads).
      const { attributes } = span as unknown as { attributes: Attributes };
      expect(attributes).toMatchObject({
        "http.request.method": "GET",
        "http.method": "GET",
        "http.status_code": 200,
        "http.target": "/v1/apps",
      });
    } finally {
      await telemetry?.release();
      collector.close();
    }
    expect(semanticConventions().http.old).toBe(false);
  });
});
