import { type JsonValue, jsonEqualWithin, WorkMeter } from "../json.js";
import type { CmpFn } from "../nodes.js";
import { LIMIT_EXCEEDED, type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `cmp` on two evaluated args (docs/expressions.md): null if either side is null; `eq`/`ne` are structural
 * with no coercion; ordering is defined for number–number (numerically) and string–string (by code
 * point) only, any other pair, two booleans included, is a type error. Comparing values takes units
 * of `meter`; past it, the answer is `LIMIT_EXCEEDED`.
 */
export function applyCmp(
  fn: CmpFn,
  left: JsonValue,
  right: JsonValue,
  meter: WorkMeter = new WorkMeter(Number.POSITIVE_INFINITY),
): OpResult {
  if (left === null || right === null) return null;
  if (fn === "eq" || fn === "ne") {
    const equal = jsonEqualWithin(left, right, meter);
    if (equal === undefined) return LIMIT_EXCEEDED;
    return fn === "eq" ? equal : !equal;
  }
  let order: number;
  if (typeof left === "number" && typeof right === "number") order = left - right;
  else if (typeof left === "string" && typeof right === "string") {
    const compared = compareCodePointsWithin(left, right, meter);
    if (compared === undefined) return LIMIT_EXCEEDED;
    order = compared;
  } else return TYPE_ERROR;
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

/**
 * `compareCodePoints` that takes one unit of `meter` per character it steps over (and one per 64
 * characters of the engine's whole-string check first), undefined once the meter is below zero.
 */
export function compareCodePointsWithin(a: string, b: string, meter: WorkMeter): number | undefined {
  meter.left -= 1 + (Math.min(a.length, b.length) >>> 6);
  if (meter.left < 0) return undefined;
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  // No further than the units left: a step past them would be undecided anyway.
  const reach = Math.min(n, meter.left);
  for (let i = 0; i < reach; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) {
      meter.left -= i;
      return codePointRank(x) - codePointRank(y);
    }
  }
  meter.left -= n;
  return meter.left < 0 ? undefined : a.length - b.length;
}

/** Moves surrogates above U+E000–U+FFFF, which is where the code points they encode belong. */
function codePointRank(unit: number): number {
  if (unit < 0xd800) return unit;
  return unit >= 0xe000 ? unit - 0x800 : unit + 0x2000;
}
