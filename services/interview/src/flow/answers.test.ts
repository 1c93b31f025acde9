import type { Question } from "@evalp/components";
import { describe, expect, it } from "vitest";
import { answerProblems, answerText, MAX_TEXT_ANSWER } from "./answers.js";

const colours: Question = {
  id: "colours",
  prompt: "Which colours?",
  input: "multi_select",
  options: [
    { id: "r", label: "Red" },
    { id: "g", label: "Green" },
    { id: "b", label: "Blue" },
  ],
};
const team: Question = { ...colours, id: "team", input: "single_select" };
const essay: Question = { id: "essay", prompt: "Tell us", input: "text" };
const years: Question = { id: "years", prompt: "Years?", input: "number", min: 0 };
const rating: Question = { id: "rating", prompt: "Rate", input: "scale", min: 1, max: 5 };

const at = (...path: string[]) => ["body", "answer", ...path];

describe("answerProblems", () => {
  it("accepts each input's one field", () => {
    expect(answerProblems(team, { option_id: "g" })).toEqual([]);
    expect(answerProblems(colours, { option_ids: ["b", "r"] })).toEqual([]);
    expect(answerProblems(essay, { text: "Plenty" })).toEqual([]);
    expect(answerProblems(years, { value: 2.5 })).toEqual([]);
    expect(answerProblems(rating, { value: 5 })).toEqual([]);
  });

  it("reports the field missing and every other field, as Pydantic does", () => {
    expect(answerProblems(team, { option: "g", note: "x" })).toEqual([
      {
        loc: at("option_id"),
        type: "missing",
        msg: "Field required",
        input: { option: "g", note: "x" },
        ctx: {},
      },
      {
        loc: at("option"),
        type: "extra_forbidden",
        msg: "Extra inputs are not permitted",
        input: "g",
        ctx: {},
      },
      {
        loc: at("note"),
        type: "extra_forbidden",
        msg: "Extra inputs are not permitted",
        input: "x",
        ctx: {},
      },
    ]);
  });

  it("checks options one by one, naming the choices", () => {
    expect(answerProblems(colours, { option_ids: ["r", "x", 3, "r"] })).toEqual([
      {
        loc: at("option_ids", "1"),
        type: "enum",
        msg: "Input should be 'r', 'g' or 'b'",
        input: "x",
        ctx: { expected: "'r', 'g' or 'b'" },
      },
      {
        loc: at("option_ids", "2"),
        type: "string_type",
        msg: "Input should be a valid string",
        input: 3,
        ctx: {},
      },
      {
        loc: at("option_ids", "3"),
        type: "value_error",
        msg: "Value error, option 'r' is chosen more than once",
        input: "r",
        ctx: { error: "option 'r' is chosen more than once" },
      },
    ]);
    expect(answerProblems(colours, { option_ids: [] })[0]).toMatchObject({
      type: "too_short",
      ctx: { field_type: "List", min_length: 1, actual_length: 0 },
    });
    expect(answerProblems(colours, { option_ids: "r" })[0]).toMatchObject({ type: "list_type" });
  });

  it("bounds text and numbers", () => {
    expect(answerProblems(essay, { text: "  " })[0]).toMatchObject({
      type: "string_too_short",
      ctx: { min_length: 1 },
    });
    expect(answerProblems(essay, { text: "x".repeat(MAX_TEXT_ANSWER + 1) })[0]).toMatchObject({
      type: "string_too_long",
      ctx: { max_length: MAX_TEXT_ANSWER },
    });
    expect(answerProblems(essay, { text: 5 })[0]).toMatchObject({ type: "string_type" });
    expect(answerProblems(years, { value: -1 })[0]).toMatchObject({
      type: "greater_than_equal",
      msg: "Input should be greater than or equal to 0",
      ctx: { ge: 0 },
    });
    expect(answerProblems(rating, { value: 0 })[0]).toMatchObject({
      type: "greater_than_equal",
      ctx: { ge: 1 },
    });
    expect(answerProblems(rating, { value: true })[0]).toMatchObject({ type: "float_type" });
  });
});

describe("answerText", () => {
  it("joins chosen labels in the question's order, and says text and numbers as they are", () => {
    expect(answerText(colours, { option_ids: ["b", "r"] })).toBe("Red, Blue");
    expect(answerText(team, { option_id: "g" })).toBe("Green");
    expect(answerText(essay, { text: "Plenty" })).toBe("Plenty");
    expect(answerText(years, { value: 2.5 })).toBe("2.5");
    expect(answerText(rating, { value: 4 })).toBe("4");
  });
});
