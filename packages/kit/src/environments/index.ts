export * from "./environment-check.js";
