export * from "./errors.js";
export * from "./ids.js";
export * from "./pydantic.js";
