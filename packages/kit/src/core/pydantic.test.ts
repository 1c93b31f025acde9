import { describe, expect, it } from "vitest";
import { lengthProblem, pluralCount, pythonAlternatives, pythonRepr, validationError } from "./pydantic.js";

// Expected texts are what Pydantic 2.13 prints for the same inputs.
describe("pythonRepr", () => {
  it("prints JSON scalars as Python does", () => {
    expect(pythonRepr("owner")).toBe("'owner'");
    expect(pythonRepr("it's")).toBe(`"it's"`);
    expect(pythonRepr(`it's "x"`)).toBe(`'it\\'s "x"'`);
    expect(pythonRepr("a\nb\\c")).toBe("'a\\nb\\\\c'");
    expect(pythonRepr(3)).toBe("3");
    expect(pythonRepr(true)).toBe("True");
    expect(pythonRepr(null)).toBe("None");
  });
});

describe("pythonAlternatives", () => {
  it("joins with commas and a last 'or'", () => {
    expect(pythonAlternatives([])).toBe("");
    expect(pythonAlternatives(["a"])).toBe("'a'");
    expect(pythonAlternatives(["a", "b"])).toBe("'a' or 'b'");
    expect(pythonAlternatives(["a", "b", 3])).toBe("'a', 'b' or 3");
  });
});

describe("pluralCount", () => {
  it("says 1 item and 2 items", () => {
    expect(pluralCount(1, "item")).toBe("1 item");
    expect(pluralCount(2, "item")).toBe("2 items");
    expect(pluralCount(0, "character")).toBe("0 characters");
  });
});

describe("lengthProblem", () => {
  it("says a list is too short", () => {
    expect(lengthProblem("min", 1, [])).toEqual({
      type: "too_short",
      msg: "List should have at least 1 item after validation, not 0",
      ctx: { field_type: "List", min_length: 1, actual_length: 0 },
      input: [],
    });
  });

  it("says a dictionary is too long", () => {
    const input = { a: 1, b: 2, c: 3 };
    expect(lengthProblem("max", 2, input)).toEqual({
      type: "too_long",
      msg: "Dictionary should have at most 2 items after validation, not 3",
      ctx: { field_type: "Dictionary", max_length: 2, actual_length: 3 },
      input,
    });
  });
});

describe("validationError", () => {
  it("carries the items as its detail", () => {
    const item = { loc: ["body", "x"], ...lengthProblem("min", 1, []) };
    const error = validationError([item]);
    expect(error.code).toBe("validation_error");
    expect(error.context).toEqual({ detail: [item] });
  });
});
