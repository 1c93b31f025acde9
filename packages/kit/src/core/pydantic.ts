import { AppError } from "./errors.js";

/**
 * One entry of a 422 `detail` list, exactly as FastAPI renders a Pydantic v2 error (all five keys;
 * docs/errors.md). The gateway builds them from its schemas; a service builds them for what only it
 * can check (an answer against its question, an import past the interface's limit), and the gateway
 * renders its `validation_error`'s `context.detail` as the body. One shape, one set of builders, so
 * the same refusal reads the same wherever it was made.
 */
export type PydanticItem = {
  loc: string[];
  msg: string;
  type: string;
  ctx: Record<string, unknown>;
  input: unknown;
};

/** What a failed check says, before it is placed at a `loc`. */
export type PydanticProblem = Omit<PydanticItem, "loc">;

/** A 422 in the Pydantic shape, from a service: the gateway renders `context.detail` as the body. */
export function validationError(detail: PydanticItem[]): AppError {
  return new AppError("validation_error", "The request failed validation.", { detail });
}

/** Python's repr() of a JSON scalar, as Pydantic puts it in messages such as `Input should be 'a' or 'b'`. */
export function pythonRepr(value: unknown): string {
  if (typeof value === "string") {
    const quote = value.includes("'") && !value.includes('"') ? '"' : "'";
    const escaped = value.replaceAll("\\", "\\\\").replaceAll("\n", "\\n").replaceAll("\t", "\\t");
    return quote + (quote === "'" ? escaped.replaceAll("'", "\\'") : escaped) + quote;
  }
  if (value === null || value === undefined) return "None";
  if (typeof value === "boolean") return value ? "True" : "False";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** Pydantic's list of alternatives, each as Python's repr: `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'`. */
export function pythonAlternatives(values: readonly unknown[]): string {
  const reprs = values.map(pythonRepr);
  return reprs.length <= 1 ? (reprs[0] ?? "") : `${reprs.slice(0, -1).join(", ")} or ${reprs.at(-1)}`;
}

/** Pydantic's "1 item" / "2 items". */
export function pluralCount(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * A list or dictionary with too few or too many entries (`too_short` / `too_long`), as Pydantic
 * says it: `List should have at most 100 items after validation, not 101`.
 */
export function lengthProblem(
  bound: "min" | "max",
  limit: number,
  input: readonly unknown[] | Readonly<Record<string, unknown>>,
): PydanticProblem {
  const fieldType = Array.isArray(input) ? "List" : "Dictionary";
  const actual = Array.isArray(input) ? input.length : Object.keys(input).length;
  const [type, words, key] =
    bound === "min" ? ["too_short", "at least", "min_length"] : ["too_long", "at most", "max_length"];
  return {
    type,
    msg: `${fieldType} should have ${words} ${pluralCount(limit, "item")} after validation, not ${actual}`,
    ctx: { field_type: fieldType, [key]: limit, actual_length: actual },
    input,
  };
}
