export * from "./errors.js";
export * from "./ids.js";
