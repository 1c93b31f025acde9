import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";
import type { AggFn } from "../nodes.js";

function agg(fn: AggFn, ...args: JsonValue[]): JsonValue | "type_error" {
  const { value, trace } = evaluate(compileExpression(expr.agg(fn, ...args.map(expr.lit))), {});
  return trace.at(-1)?.error ?? value;
}

describe("agg", () => {
  it.each<[AggFn, JsonValue[], JsonValue | "type_error"]>([
    ["sum", [1, 2, null, 3], 6],
    ["sum", [-1.5], -1.5],
    ["min", [3, null, 1, 2], 1],
    ["max", [3, null, 1, 2], 3],
    ["min", [-0, 0], 0],
    ["median", [3, 1, 2], 2],
    ["median", [4, 1, 3, 2], 2.5],
    ["median", [10, null, 1], 5.5],
    ["median", [5], 5],
    ["median", [1.7e308, 1.7e308], 1.7e308],
    ["count", [1, "a", [1], null, {}, false], 5],
    ["count", [null, null], 0],
    ["count", [], 0],
  ])("%s %j = %j", (fn, args, expected) => {
    expect(agg(fn, ...args)).toBe(expected);
  });

  it("gives null when no values remain, except count", () => {
    for (const fn of ["sum", "min", "max", "median"] as const) {
      expect(agg(fn)).toBeNull();
      expect(agg(fn, null, null)).toBeNull();
    }
    expect(agg("count")).toBe(0);
    expect(agg("count", null)).toBe(0);
  });

  it("is a type error for a non-number outside count, even beside nulls; arrays are not spread", () => {
    for (const fn of ["sum", "min", "max", "median"] as const) {
      expect(agg(fn, 1, "2")).toBe("type_error");
      expect(agg(fn, null, true)).toBe("type_error");
      expect(agg(fn, [1, 2])).toBe("type_error");
    }
    expect(agg("count", [1, 2])).toBe(1);
  });

  it("gives null for a non-finite sum", () => {
    expect(agg("sum", 1e308, 1e308)).toBeNull();
  });
});
