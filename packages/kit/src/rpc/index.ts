export * from "./connect-client.js";
export * from "./connect-errors.js";
export * from "./connect-server.js";
export * from "./peer-outage.js";
export * from "./plane-clients.js";
export * from "./request-context.js";
export * from "./rpc-tracing.js";
