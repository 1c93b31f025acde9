export * from "./idempotency-interceptor.js";
export * from "./idempotency-keys.js";
