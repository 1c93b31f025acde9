import type { JsonValue } from "./json.js";

/** Why a step's value is null besides the value itself: a type error, or a comparison past its work limit. */
export type TraceError = "type_error" | "limit_exceeded";

/**
 * What stands in a step for a value too large to copy into the trace (docs/expressions.md#the-trace):
 * its JSON type and its size (UTF-16 units of a string, items of an array, properties of an object).
 */
export type OmittedValue = { type: "string" | "array" | "object"; size: number };

/**
 * One evaluated node (docs/expressions.md#the-trace): its JSON pointer relative to the expression's
 * root, its `op` and `fn`, the value it produced, `value_omitted` (and `value: null`) when that value
 * was too large to record, and `error` when the value is null because of a type error or a limit.
 * `fn`, `value_omitted` and `error` are absent, not undefined, when they do not apply.
 */
export type TraceStep = {
  path: string;
  op: string;
  fn?: string;
  value: JsonValue;
  value_omitted?: OmittedValue;
  error?: TraceError;
};

/** Evaluation inputs besides the scope; `now` fixes "today" for `years_since` (default: the clock). */
export type EvaluateOptions = { now?: Date };
