export * from "./bundle-contents.js";
export * from "./database.js";
export * from "./names.js";
export * from "./nats-server.js";
export * from "./ports.js";
export * from "./postgres-server.js";
export * from "./receiver.js";
export * from "./redis-server.js";
