import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";

function isIn(needle: JsonValue, haystack: JsonValue): JsonValue | "type_error" {
  const { value, trace } = evaluate(compileExpression(expr.in(expr.lit(needle), expr.lit(haystack))), {});
  return trace.at(-1)?.error ?? value;
}

describe("in, SQL IN semantics", () => {
  it.each<[JsonValue, JsonValue, JsonValue | "type_error"]>([
    [2, [1, 2, 3], true],
    [4, [1, 2, 3], false],
    [1, [], false],
    ["1", [1], false],
    [true, [1, "true"], false],
    [{ a: [1] }, [{ a: [1] }], true],
    [[1, 2], [[1, 2]], true],
    [2, [null, 2], true],
    [4, [1, null], null],
    [null, [1, 2], null],
    [null, [], null],
    [null, [null], null],
    [1, null, null],
    [null, null, null],
    [1, "abc", "type_error"],
    [1, { a: 1 }, "type_error"],
    [1, 1, "type_error"],
    [null, "abc", "type_error"],
  ])("%j in %j = %j", (needle, haystack, expected) => {
    expect(isIn(needle, haystack)).toBe(expected);
  });
});
