import { type JsonValue, jsonEqual } from "../json.js";
import type { CmpFn } from "../nodes.js";
import { type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `cmp` on two evaluated args (docs/expressions.md): null if either side is null; `eq`/`ne` are structural
 * with no coercion; ordering is defined for number–number (numerically) and string–string (by code
 * point) only, any other pair, two booleans included, is a type error.
 */
export function applyCmp(fn: CmpFn, left: JsonValue, right: JsonValue): OpResult {
  if (left === null || right === null) return null;
  if (fn === "eq") return jsonEqual(left, right);
  if (fn === "ne") return !jsonEqual(left, right);
  let order: number;
  if (typeof left === "number" && typeof right === "number") order = left - right;
  else if (typeof left === "string" && typeof right === "string") order = compareCodePoints(left, right);
  else return TYPE_ERROR;
  switch (fn) {
    case "lt":
      return order < 0;
    case "lte":
      return order <= 0;
    case "gt":
      return order > 0;
    case "gte":
      return order >= 0;
  }
}

/**
 * Orders strings by Unicode code point, which JavaScript's `<` does not: it compares UTF-16 units, so
 * an astral character (a surrogate pair, D800–DFFF) would sort before U+E000–U+FFFF. Negative, zero or
 * positive like a comparator.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates above U+E000–U+FFFF, which is where the code points they encode belong. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
