export * from "./subject-erasure-consumer.js";
export * from "./subject-export.js";
