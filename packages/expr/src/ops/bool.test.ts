import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";
import type { BoolFn } from "../nodes.js";

function bool(fn: BoolFn, ...args: JsonValue[]): JsonValue | "type_error" {
  const { value, trace } = evaluate(compileExpression(expr.bool(fn, ...args.map(expr.lit))), {});
  return trace.at(-1)?.error ?? value;
}

const T = true;
const F = false;
const U = null;

describe("bool, Kleene three-valued logic", () => {
  it.each([
    [T, T, T],
    [T, F, F],
    [T, U, U],
    [F, T, F],
    [F, F, F],
    [F, U, F],
    [U, T, U],
    [U, F, F],
    [U, U, U],
  ])("and(%s, %s) = %s", (a, b, expected) => {
    expect(bool("and", a, b)).toBe(expected);
  });

  it.each([
    [T, T, T],
    [T, F, T],
    [T, U, T],
    [F, T, T],
    [F, F, F],
    [F, U, U],
    [U, T, T],
    [U, F, U],
    [U, U, U],
  ])("or(%s, %s) = %s", (a, b, expected) => {
    expect(bool("or", a, b)).toBe(expected);
  });

  it.each([
    [T, F],
    [F, T],
    [U, U],
  ])("not(%s) = %s", (a, expected) => {
    expect(bool("not", a)).toBe(expected);
  });

  it("takes any number of args for and/or", () => {
    expect(bool("and", T)).toBe(T);
    expect(bool("or", F)).toBe(F);
    expect(bool("and", T, T, T, U)).toBe(U);
    expect(bool("and", T, U, F)).toBe(F);
    expect(bool("or", F, U, F)).toBe(U);
    expect(bool("or", F, U, T)).toBe(T);
  });

  it("is a type error for any non-boolean, even where a false or true would decide", () => {
    expect(bool("not", 1)).toBe("type_error");
    expect(bool("not", "true")).toBe("type_error");
    expect(bool("and", F, "x")).toBe("type_error");
    expect(bool("or", T, 0)).toBe("type_error");
    expect(bool("and", U, [])).toBe("type_error");
  });
});
