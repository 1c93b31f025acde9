export * from "./binaries.js";
export * from "./ensure.js";
export * from "./nats.js";
export * from "./pgbouncer.js";
export * from "./postgres.js";
export * from "./reachability.js";
export * from "./redis.js";
export * from "./server-process.js";
