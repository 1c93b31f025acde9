export * from "./durable-consumer.js";
export * from "./nats.js";
export * from "./nats-permissions.js";
export * from "./outbox/index.js";
export * from "./wake-loop.js";
