import type { JsonValue } from "../json.js";
import type { AggFn } from "../nodes.js";
import { finiteOrNull, type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `agg` over its evaluated args (docs/expressions.md). Nulls are dropped first; `count` counts
 * what is left, of any type, and is never null; the others need numbers (anything else is a type
 * error) and give null when nothing is left. An array arg is one value, not spread: `sum` of an array
 * is a type error and `count` counts it once.
 */
export function applyAgg(fn: AggFn, args: readonly JsonValue[]): OpResult {
  const values = args.filter((arg) => arg !== null);
  if (fn === "count") return values.length;
  if (values.some((value) => typeof value !== "number")) return TYPE_ERROR;
  const xs = values as number[];
  if (xs.length === 0) return null;
  switch (fn) {
    case "sum":
      return finiteOrNull(xs.reduce((sum, x) => sum + x, 0));
    case "min":
      return finiteOrNull(xs.reduce((least, x) => Math.min(least, x)));
    case "max":
      return finiteOrNull(xs.reduce((most, x) => Math.max(most, x)));
    case "median": {
      const sorted = [...xs].sort((a, b) => a - b);
      const mid = sorted.length >> 1;
      const upper = sorted[mid] as number;
      if (sorted.length % 2 === 1) return finiteOrNull(upper);
      // Halving each first cannot overflow where (a + b) / 2 could, and halving is exact (but for subnormals).
      return finiteOrNull((sorted[mid - 1] as number) / 2 + upper / 2);
    }
  }
}
