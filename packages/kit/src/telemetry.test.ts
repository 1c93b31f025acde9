import { createRequire } from "node:module";
import { trace } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { startTelemetry, tracingActive } from "./telemetry.js";

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
});
