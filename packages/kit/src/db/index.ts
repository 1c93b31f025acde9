export * from "./db.js";
export * from "./migrate.js";
export * from "./migration-lint.js";
export * from "./multi-statement.js";
export * from "./paging.js";
export * from "./pool-metrics.js";
export * from "./prepared-statements.js";
export * from "./retention.js";
