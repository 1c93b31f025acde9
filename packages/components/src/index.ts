export * from "./schemas.js";
export * from "./validate.js";
