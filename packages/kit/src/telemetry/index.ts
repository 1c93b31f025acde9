export * from "./logger.js";
export * from "./metric-catalog.js";
export * from "./metrics.js";
export * from "./telemetry.js";
export * from "./trace-context.js";
