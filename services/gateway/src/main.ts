import { preloadTelemetry } from "@evalp/kit/telemetry";

// Tracing's module hooks, when it is on, must be in place before the process's modules load
// (telemetry.ts): the rest is imported after.
preloadTelemetry();
const { runProcess } = await import("@evalp/kit");
const { createGateway } = await import("./compose.js");

await runProcess("gateway", createGateway);
