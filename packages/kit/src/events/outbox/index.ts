export * from "./outbox.js";
export * from "./outbox-handoff.js";
export * from "./outbox-metrics.js";
export * from "./outbox-publisher.js";
export * from "./outbox-reconcile.js";
export * from "./outbox-relay.js";
export * from "./outbox-retention.js";
export * from "./outbox-tracing.js";
