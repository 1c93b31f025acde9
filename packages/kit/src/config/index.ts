export * from "./config.js";
export * from "./service-endpoints.js";
