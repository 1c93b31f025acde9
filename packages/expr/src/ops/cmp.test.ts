import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";
import type { CmpFn } from "../nodes.js";
import { compareCodePoints } from "./cmp.js";

function cmp(fn: CmpFn, left: JsonValue, right: JsonValue): JsonValue | "type_error" {
  const { value, trace } = evaluate(compileExpression(expr.cmp(fn, expr.lit(left), expr.lit(right))), {});
  return trace.at(-1)?.error ?? value;
}

describe("cmp", () => {
  it.each<[CmpFn, JsonValue, JsonValue, JsonValue | "type_error"]>([
    ["eq", 1, 1, true],
    ["eq", 1, 1.0, true],
    ["eq", 1, 2, false],
    ["eq", "1", 1, false],
    ["eq", true, 1, false],
    ["eq", "a", "a", true],
    ["eq", true, true, true],
    ["eq", [1, { a: 1, b: 2 }], [1, { b: 2, a: 1 }], true],
    ["eq", [1, 2], [2, 1], false],
    ["eq", { a: 1 }, { a: 1, b: 2 }, false],
    ["eq", { a: 1, c: 2 }, { a: 1, b: 2 }, false],
    ["eq", [], {}, false],
    ["eq", [null], [null], true],
    ["eq", { a: null }, {}, false],
    ["eq", [[1]], [[1, 2]], false],
    ["ne", "a", "b", true],
    ["ne", 1, 1, false],
    ["ne", "1", 1, true],
    ["ne", { a: [1] }, { a: [1] }, false],
    ["lt", 1, 2, true],
    ["lt", 2, 2, false],
    ["lte", 2, 2, true],
    ["lte", 3, 2, false],
    ["gt", 3, 2, true],
    ["gt", 2, 2, false],
    ["gte", 2, 2, true],
    ["gte", 1, 2, false],
    ["lt", -0.5, 0, true],
    ["gt", "b", "a", true],
    ["lt", "Z", "a", true],
    ["lt", "ab", "abc", true],
    ["gte", "abc", "ab", true],
    ["lte", "é", "é", true],
    ["lt", "\uffff", "😀", true],
    ["gt", "😀", "\ue000", true],
    ["lt", "😀", "😁", true],
  ])("%s(%j, %j) = %j", (fn, left, right, expected) => {
    expect(cmp(fn, left, right)).toBe(expected);
  });

  it("is null when either side is null, for every fn (before any type check)", () => {
    for (const fn of ["eq", "ne", "lt", "lte", "gt", "gte"] as const) {
      expect(cmp(fn, null, 1)).toBeNull();
      expect(cmp(fn, "a", null)).toBeNull();
      expect(cmp(fn, null, null)).toBeNull();
      expect(cmp(fn, null, [1])).toBeNull();
    }
  });

  it("is a type error to order across types or anything but numbers and strings", () => {
    for (const fn of ["lt", "lte", "gt", "gte"] as const) {
      expect(cmp(fn, 1, "2")).toBe("type_error");
      expect(cmp(fn, "1", 2)).toBe("type_error");
      expect(cmp(fn, true, false)).toBe("type_error");
      expect(cmp(fn, [1], [2])).toBe("type_error");
      expect(cmp(fn, { a: 1 }, { a: 1 })).toBe("type_error");
    }
  });

  it("orders strings by code point, not by UTF-16 unit", () => {
    expect("\uffff" < "😀").toBe(false);
    expect(compareCodePoints("\uffff", "😀")).toBeLessThan(0);
    expect(compareCodePoints("😀", "😀")).toBe(0);
    expect(compareCodePoints("a", "b")).toBeLessThan(0);
    expect(compareCodePoints("b", "a")).toBeGreaterThan(0);
    expect(compareCodePoints("", "a")).toBeLessThan(0);
  });
});
