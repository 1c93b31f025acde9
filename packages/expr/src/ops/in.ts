import { type JsonValue, jsonEqualWithin, WorkMeter } from "../json.js";
import { LIMIT_EXCEEDED, type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `in` with SQL `IN` semantics and `eq`'s equality, checked in the contract's order: a null haystack
 * gives null; a haystack that is not an array is a type error; a null needle gives null; a match gives
 * true; no match gives null if the haystack holds a null (it might have matched), else false.
 * Each item takes its units of `meter`; past it, the answer is `LIMIT_EXCEEDED`.
 */
export function applyIn(
  needle: JsonValue,
  haystack: JsonValue,
  meter: WorkMeter = new WorkMeter(Number.POSITIVE_INFINITY),
): OpResult {
  if (haystack === null) return null;
  if (!Array.isArray(haystack)) return TYPE_ERROR;
  if (needle === null) return null;
  let sawNull = false;
  for (const item of haystack) {
    if (item === null) {
      meter.left -= 1;
      if (meter.left < 0) return LIMIT_EXCEEDED;
      sawNull = true;
      continue;
    }
    const equal = jsonEqualWithin(needle, item, meter);
    if (equal === undefined) return LIMIT_EXCEEDED;
    if (equal) return true;
  }
  return sawNull ? null : false;
}
