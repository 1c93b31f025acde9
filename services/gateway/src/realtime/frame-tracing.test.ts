import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { startTelemetry } from "@evalp/kit";
import { type Attributes, SpanKind, trace } from "@opentelemetry/api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { traceFrame } from "./frame-tracing.js";

// A collector that takes what the provider exports at release.
const collector = createServer((request, response) => {
  request.resume();
  request.on("end", () => response.writeHead(200, { "content-type": "application/json" }).end("{}"));
});
let telemetry: ReturnType<typeof startTelemetry>;

beforeAll(async () => {
  collector.listen(0, "127.0.0.1");
  await once(collector, "listening");
  const { port } = collector.address() as AddressInfo;
  telemetry = startTelemetry(
    { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`, OTEL_BSP_SCHEDULE_DELAY: 5_000 },
    "gateway",
  );
});
afterAll(async () => {
  await telemetry?.release();
  collector.close();
});

describe("a realtime frame's span", () => {
  it("is a NATS consumer span naming the subject it came on, around the relay", () => {
    let seen: { kind: SpanKind; attributes: Attributes } | undefined;
    traceFrame({ subject: "realtime.interview.ev-1" }, "ev-1", () => {
      // The SDK's span, readable: what the exporter is given.
      seen = trace.getActiveSpan() as unknown as { kind: SpanKind; attributes: Attributes };
    });
    expect(seen?.kind).toBe(SpanKind.CONSUMER);
    expect(seen?.attributes).toMatchObject({
      "messaging.system": "nats",
      "messaging.operation.type": "process",
      "messaging.operation.name": "process",
      "messaging.destination.name": "realtime.interview.ev-1",
      "evalp.evaluation_id": "ev-1",
    });
  });
});
