import type { JsonValue } from "../json.js";

/**
 * What an op returns when its inputs have the wrong type (docs/expressions.md): the evaluator turns it into a
 * null value and a trace step with `"error": "type_error"`. A symbol, so no JSON value can be taken
 * for it.
 */
export const TYPE_ERROR: unique symbol = Symbol("type_error");

/**
 * What a comparison returns when it would pass the evaluation's comparison work (docs/expressions.md#limits):
 * the evaluator turns it into a null value and a trace step with `"error": "limit_exceeded"`.
 */
export const LIMIT_EXCEEDED: unique symbol = Symbol("limit_exceeded");

/** The outcome of applying one op to its evaluated args. */
export type OpResult = JsonValue | typeof TYPE_ERROR | typeof LIMIT_EXCEEDED;

/**
 * Arithmetic results leave the evaluator only as JSON numbers: a non-finite result (overflow, `pow`
 * giving NaN or Infinity) is null, and -0 is 0 so that results print and compare one way.
 */
export function finiteOrNull(n: number): number | null {
  if (!Number.isFinite(n)) return null;
  return n === 0 ? 0 : n;
}
