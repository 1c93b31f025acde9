import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";
import type { CalcFn } from "../nodes.js";
import { applyCalc, roundHalfAwayFromZero } from "./calc.js";

/** The root's value, or "type_error" when the root step carries the error. */
function calc(fn: CalcFn, ...args: JsonValue[]): JsonValue | "type_error" {
  const { value, trace } = evaluate(compileExpression(expr.calc(fn, ...args.map(expr.lit))), {});
  return trace.at(-1)?.error ?? value;
}

describe("calc", () => {
  it.each<[CalcFn, JsonValue[], JsonValue | "type_error"]>([
    ["add", [1, 2, 3], 6],
    ["add", [5], 5],
    ["add", [0.1, 0.2], 0.1 + 0.2],
    ["mul", [2, 3, 4], 24],
    ["mul", [7], 7],
    ["sub", [5, 8], -3],
    ["div", [7, 2], 3.5],
    ["mod", [7, 3], 1],
    ["mod", [5.5, 2], 1.5],
    ["pow", [2, 10], 1024],
    ["pow", [2, -1], 0.5],
    ["pow", [0, 0], 1],
    ["neg", [3], -3],
    ["abs", [-2.5], 2.5],
    ["floor", [-1.5], -2],
    ["floor", [1.5], 1],
    ["ceil", [-1.5], -1],
    ["ceil", [1.2], 2],
  ])("%s %j = %j", (fn, args, expected) => {
    expect(calc(fn, ...args)).toBe(expected);
  });

  it("gives null for a null arg, for every fn", () => {
    expect(calc("add", 1, null, 2)).toBeNull();
    expect(calc("mul", null)).toBeNull();
    expect(calc("sub", null, 1)).toBeNull();
    expect(calc("div", 1, null)).toBeNull();
    expect(calc("mod", null, 0)).toBeNull();
    expect(calc("pow", null, 2)).toBeNull();
    expect(calc("neg", null)).toBeNull();
    expect(calc("abs", null)).toBeNull();
    expect(calc("floor", null)).toBeNull();
    expect(calc("ceil", null)).toBeNull();
    expect(calc("round", null)).toBeNull();
    expect(calc("round", 1.5, null)).toBeNull();
    expect(calc("round", null, 2)).toBeNull();
  });

  it("is a type error for any non-number, with no coercion, even beside a null", () => {
    expect(calc("add", 1, "2")).toBe("type_error");
    expect(calc("add", true, 1)).toBe("type_error");
    expect(calc("mul", [2], 3)).toBe("type_error");
    expect(calc("sub", { n: 1 }, 1)).toBe("type_error");
    expect(calc("neg", "3")).toBe("type_error");
    expect(calc("add", null, "x")).toBe("type_error");
    expect(calc("round", 1.5, "1")).toBe("type_error");
  });

  it("gives null for division and mod by zero", () => {
    expect(calc("div", 1, 0)).toBeNull();
    expect(calc("div", 0, 0)).toBeNull();
    expect(calc("div", -1, -0)).toBeNull();
    expect(calc("mod", 1, 0)).toBeNull();
    expect(calc("mod", 0, 0)).toBeNull();
  });

  it("takes the sign of the dividend in mod, like SQL %", () => {
    expect(calc("mod", -7, 3)).toBe(-1);
    expect(calc("mod", 7, -3)).toBe(1);
    expect(calc("mod", -7, -3)).toBe(-1);
    expect(Object.is(calc("mod", -4, 2), 0)).toBe(true);
  });

  it("gives null for non-finite results and never -0", () => {
    expect(calc("add", 1e308, 1e308)).toBeNull();
    expect(calc("mul", 1e200, 1e200)).toBeNull();
    expect(calc("sub", -1e308, 1e308)).toBeNull();
    expect(calc("div", 1e308, 1e-308)).toBeNull();
    expect(calc("pow", 10, 400)).toBeNull();
    expect(calc("pow", 0, -1)).toBeNull();
    expect(calc("pow", -8, 1 / 3)).toBeNull();
    expect(Object.is(calc("neg", 0), 0)).toBe(true);
    expect(Object.is(calc("ceil", -0.5), 0)).toBe(true);
    expect(Object.is(calc("round", -0.4), 0)).toBe(true);
    expect(Object.is(calc("mul", -1, 0), 0)).toBe(true);
  });

  it.each<[number, number | undefined, number]>([
    [2.5, undefined, 3],
    [-2.5, undefined, -3],
    [2.4, undefined, 2],
    [-2.6, undefined, -3],
    [0.5, undefined, 1],
    [0.49999999999999994, undefined, 0],
    [4503599627370497, undefined, 4503599627370497],
    [1.005, 2, 1.01],
    [-1.005, 2, -1.01],
    [2.345, 2, 2.35],
    [2.344, 2, 2.34],
    [1.5, 0, 2],
    [1234.5, -2, 1200],
    [1250, -2, 1300],
    [-1250, -2, -1300],
    [1.5e-7, 7, 2e-7],
    [1e-7, 7, 1e-7],
    [1e21 + 0.5, 1, 1e21],
    [1e300, 400, 1e300],
    [1.5, 1_000_000, 1.5],
    [123, -1_000_000, 0],
    [5e-324, 400, 5e-324],
  ])("round(%d, %s) = %d, half away from zero", (x, digits, expected) => {
    expect(digits === undefined ? calc("round", x) : calc("round", x, digits)).toBe(expected);
  });

  it("gives null for rounding to a non-integer number of digits", () => {
    expect(calc("round", 1.25, 1.5)).toBeNull();
  });

  it("rounds directly too", () => {
    expect(roundHalfAwayFromZero(-0.5, 0)).toBe(-1);
    expect(applyCalc("round", [2.675, 2])).toBe(2.68);
  });
});
