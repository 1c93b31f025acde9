export * from "./config.js";
export * from "./redis-url.js";
export * from "./service-endpoints.js";
