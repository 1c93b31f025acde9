export * from "./grpc-health.js";
export * from "./grpc-reflection.js";
export * from "./ops-server.js";
export * from "./plane-service.js";
export * from "./process.js";
export * from "./readiness.js";
export * from "./serve.js";
export * from "./shutdown.js";
