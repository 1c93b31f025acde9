import type { JsonValue } from "../json.js";
import type { CalcFn } from "../nodes.js";
import { finiteOrNull, type OpResult, TYPE_ERROR } from "./result.js";

/**
 * `calc` on evaluated args (docs/expressions.md). A non-number arg (booleans and numeric strings included) is a
 * type error even when another arg is null; otherwise any null arg gives null. Division or `mod` by
 * zero, and any non-finite result, give null.
 */
export function applyCalc(fn: CalcFn, args: readonly JsonValue[]): OpResult {
  let sawNull = false;
  for (const arg of args) {
    if (arg === null) sawNull = true;
    else if (typeof arg !== "number") return TYPE_ERROR;
  }
  if (sawNull) return null;
  const xs = args as readonly number[];
  const a = xs[0] as number;
  const b = xs[1] as number;
  switch (fn) {
    case "add":
      return finiteOrNull(xs.reduce((sum, x) => sum + x, 0));
    case "mul":
      return finiteOrNull(xs.reduce((product, x) => product * x, 1));
    case "sub":
      return finiteOrNull(a - b);
    case "div":
      return b === 0 ? null : finiteOrNull(a / b);
    case "mod":
      // JavaScript's % already takes the sign of the dividend, as SQL's does.
      return b === 0 ? null : finiteOrNull(a % b);
    case "pow":
      return finiteOrNull(a ** b);
    case "neg":
      return finiteOrNull(-a);
    case "abs":
      return finiteOrNull(Math.abs(a));
    case "floor":
      return finiteOrNull(Math.floor(a));
    case "ceil":
      return finiteOrNull(Math.ceil(a));
    case "round":
      if (xs.length === 1) return finiteOrNull(roundHalfAwayFromZero(a, 0));
      // Digits must be a whole number: rounding to 1.5 places means nothing, so it gives null.
      return Number.isInteger(b) ? finiteOrNull(roundHalfAwayFromZero(a, b)) : null;
  }
}

/**
 * Rounds half away from zero at `digits` decimal places (negative digits round to tens, hundreds …).
 * It rounds the number as it is written in JSON, so `round(1.005, 2)` is 1.01 even though the double
 * nearest 1.005 lies just below it: the shift by powers of ten is done on the decimal exponent, never
 * by multiplying.
 */
export function roundHalfAwayFromZero(x: number, digits: number): number {
  // Beyond ±400 places every double is already exact (or rounds to 0), and the exponent stays printable.
  const d = Math.max(-400, Math.min(400, digits));
  if (d === 0) return halfAway(x);
  const shifted = shiftDecimal(x, d);
  if (!Number.isFinite(shifted)) return x;
  return shiftDecimal(halfAway(shifted), -d);
}

function halfAway(x: number): number {
  const magnitude = Math.abs(x);
  const whole = Math.floor(magnitude);
  // magnitude - whole is exact for doubles, unlike magnitude + 0.5.
  const rounded = magnitude - whole >= 0.5 ? whole + 1 : whole;
  return x < 0 ? -rounded : rounded;
}

function shiftDecimal(x: number, places: number): number {
  const [mantissa, exponent = "0"] = String(x).split("e");
  return Number(`${mantissa}e${Number(exponent) + places}`);
}
