import type { Question } from "@evalp/components";
import { lengthProblem, type PydanticItem, pythonAlternatives, pythonRepr } from "@evalp/kit";

/** The longest text answer; longer is `string_too_long`. */
export const MAX_TEXT_ANSWER = 10_000;

/** The one field each input's answer has (docs/expressions.md#component-contents). */
const FIELD: Record<Question["input"], string> = {
  single_select: "option_id",
  multi_select: "option_ids",
  text: "text",
  number: "value",
  scale: "value",
};

function expected(question: Question): string {
  return pythonAlternatives((question.options ?? []).map((option) => option.id));
}

function item(loc: string[], type: string, msg: string, input: unknown, ctx: Record<string, unknown> = {}) {
  return { loc, type, msg, input, ctx };
}

function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

function numberProblems(question: Question, value: unknown, at: string[]): PydanticItem[] {
  if (!isNumber(value)) return [item(at, "float_type", "Input should be a valid number", value)];
  if (question.min !== undefined && value < question.min) {
    return [
      item(at, "greater_than_equal", `Input should be greater than or equal to ${question.min}`, value, {
        ge: question.min,
      }),
    ];
  }
  if (question.max !== undefined && value > question.max) {
    return [
      item(at, "less_than_equal", `Input should be less than or equal to ${question.max}`, value, {
        le: question.max,
      }),
    ];
  }
  return [];
}

function optionProblem(question: Question, value: unknown, at: string[]): PydanticItem | null {
  if (typeof value !== "string") return item(at, "string_type", "Input should be a valid string", value);
  if ((question.options ?? []).some((option) => option.id === value)) return null;
  const choices = expected(question);
  return item(at, "enum", `Input should be ${choices}`, value, { expected: choices });
}

function valueProblems(question: Question, value: unknown, at: string[]): PydanticItem[] {
  switch (question.input) {
    case "single_select": {
      const problem = optionProblem(question, value, at);
      return problem ? [problem] : [];
    }
    case "multi_select": {
      if (!Array.isArray(value)) return [item(at, "list_type", "Input should be a valid list", value)];
      if (value.length === 0) {
        return [{ loc: at, ...lengthProblem("min", 1, value) }];
      }
      const seen = new Set<unknown>();
      const problems: PydanticItem[] = [];
      value.forEach((choice, index) => {
        const loc = [...at, String(index)];
        const problem = optionProblem(question, choice, loc);
        if (problem) problems.push(problem);
        else if (seen.has(choice)) {
          const error = `option ${pythonRepr(String(choice))} is chosen more than once`;
          problems.push(item(loc, "value_error", `Value error, ${error}`, choice, { error }));
        }
        seen.add(choice);
      });
      return problems;
    }
    case "text": {
      if (typeof value !== "string")
        return [item(at, "string_type", "Input should be a valid string", value)];
      if (value.trim().length === 0) {
        return [
          item(at, "string_too_short", "String should have at least 1 character", value, { min_length: 1 }),
        ];
      }
      if (value.length > MAX_TEXT_ANSWER) {
        return [
          item(at, "string_too_long", `String should have at most ${MAX_TEXT_ANSWER} characters`, value, {
            max_length: MAX_TEXT_ANSWER,
          }),
        ];
      }
      return [];
    }
    case "number":
    case "scale":
      return numberProblems(question, value, at);
  }
}

/**
 * Whether an answer fits its question's `input` (docs/expressions.md#component-contents: `{option_id}`, `{option_ids}`,
 * `{text}` or `{value}`), as Pydantic-shaped problems at `["body","answer",…]`: its one field
 * missing, any other field, and the field's own type, options and bounds.
 */
export function answerProblems(question: Question, answer: Record<string, unknown>): PydanticItem[] {
  const base = ["body", "answer"];
  const field = FIELD[question.input];
  const problems: PydanticItem[] = [];
  if (!Object.hasOwn(answer, field)) {
    problems.push(item([...base, field], "missing", "Field required", answer));
  } else {
    problems.push(...valueProblems(question, answer[field], [...base, field]));
  }
  for (const key of Object.keys(answer)) {
    if (key !== field)
      problems.push(item([...base, key], "extra_forbidden", "Extra inputs are not permitted", answer[key]));
  }
  return problems;
}

/**
 * An answer as the transcript says it (docs/interview.md, docs/expressions.md#component-contents): the chosen option labels joined by
 * ", " in the question's order, the text, or the number.
 */
export function answerText(question: Question, answer: Record<string, unknown>): string {
  const options = question.options ?? [];
  switch (question.input) {
    case "single_select":
      return options.find((option) => option.id === answer.option_id)?.label ?? String(answer.option_id);
    case "multi_select": {
      const chosen = new Set(answer.option_ids as unknown[]);
      return options
        .filter((option) => chosen.has(option.id))
        .map((option) => option.label)
        .join(", ");
    }
    case "text":
      return String(answer.text);
    case "number":
    case "scale":
      return String(answer.value);
  }
}
