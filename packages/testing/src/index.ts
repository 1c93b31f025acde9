export * from "./database.js";
export * from "./names.js";
