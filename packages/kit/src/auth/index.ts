export * from "./participant-tokens.js";
export * from "./scopes.js";
export * from "./sealing.js";
export * from "./service-callers.js";
export * from "./service-tokens.js";
