import { type JsonValue, jsonEqual } from "../json.js";
import { type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `in` with SQL `IN` semantics and `eq`'s equality, checked in the contract's order: a null haystack
 * gives null; a haystack that is not an array is a type error; a null needle gives null; a match gives
 * true; no match gives null if the haystack holds a null (it might have matched), else false.
 */
export function applyIn(needle: JsonValue, haystack: JsonValue): OpResult {
  if (haystack === null) return null;
  if (!Array.isArray(haystack)) return TYPE_ERROR;
  if (needle === null) return null;
  let sawNull = false;
  for (const item of haystack) {
    if (item === null) sawNull = true;
    else if (jsonEqual(needle, item)) return true;
  }
  return sawNull ? null : false;
}
