export * from "./bundle-contents.js";
export * from "./database.js";
export * from "./names.js";
