import type { JsonValue } from "../json.js";
import type { BoolFn } from "../nodes.js";
import { type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `bool` under Kleene's three-valued logic (docs/expressions.md): null is "unknown", so `and` is false if any
 * arg is false, else null if any is null, else true; `or` dually; `not null` is null. Any arg that is
 * neither boolean nor null is a type error, even where a false (or true) would decide the result.
 */
export function applyBool(fn: BoolFn, args: readonly JsonValue[]): OpResult {
  let sawTrue = false;
  let sawFalse = false;
  let sawNull = false;
  for (const arg of args) {
    if (arg === true) sawTrue = true;
    else if (arg === false) sawFalse = true;
    else if (arg === null) sawNull = true;
    else return TYPE_ERROR;
  }
  switch (fn) {
    case "not":
      return sawNull ? null : !sawTrue;
    case "and":
      return sawFalse ? false : sawNull ? null : true;
    case "or":
      return sawTrue ? true : sawNull ? null : false;
  }
}
