export * from "./environment-scope.js";
