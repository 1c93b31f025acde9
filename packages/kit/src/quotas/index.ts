export * from "./quota-counters.js";
export * from "./quota-guard.js";
