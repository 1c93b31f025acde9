/**
 * A JSON value as it arrives in a request body. Expressions read, produce and compare only these, so
 * every result can be put in a response as is.
 */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON object: what `var` can descend into by name and what `eq` compares key by key. */
export type JsonObject = { [key: string]: JsonValue };

/**
 * True for `{}`-style objects only: arrays, class instances (Date, Map …) and null are not nodes nor
 * JSON objects, so the validator and `var` must not mistake them for one.
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * True when `value` is JSON: finite numbers, plain objects and dense arrays, no cycles. A `lit` can
 * carry any JSON, however deep, so the walk keeps its own stack instead of recursing.
 */
export function isJsonValue(value: unknown): value is JsonValue {
  if (typeof value !== "object" || value === null) {
    return (
      value === null || typeof value === "string" || typeof value === "boolean" || Number.isFinite(value)
    );
  }
  // Each frame is entered once and left once, so `open` holds exactly the containers on the current
  // path: a container met again while open is a cycle, one met again after it closed is only shared.
  const stack: Array<{ value: unknown; leave: boolean }> = [{ value, leave: false }];
  const open = new Set<object>();
  while (stack.length > 0) {
    const frame = stack.pop() as { value: unknown; leave: boolean };
    const v = frame.value;
    if (frame.leave) {
      open.delete(v as object);
      continue;
    }
    if (v === null || typeof v === "string" || typeof v === "boolean") continue;
    if (typeof v === "number") {
      if (!Number.isFinite(v)) return false;
      continue;
    }
    if (typeof v !== "object") return false;
    if (open.has(v)) return false;
    if (Array.isArray(v)) {
      open.add(v);
      stack.push({ value: v, leave: true });
      for (let i = 0; i < v.length; i++) stack.push({ value: v[i], leave: false });
    } else if (isPlainObject(v)) {
      open.add(v);
      stack.push({ value: v, leave: true });
      for (const key of Object.keys(v)) stack.push({ value: v[key], leave: false });
    } else {
      return false;
    }
  }
  return true;
}

/**
 * What is left of an evaluation's comparison work (docs/expressions.md#limits): the comparisons take
 * their units from it as they go and give up once it is below zero. Shared by every node of one
 * evaluation (every axis of a scorecard). It lists each object's keys once, so that comparing the same
 * large object many times does not list them again before the units are taken.
 */
export class WorkMeter {
  left: number;
  private readonly keys = new Map<object, string[]>();

  constructor(units: number) {
    this.left = units;
  }

  keysOf(object: Record<string, unknown>): string[] {
    let keys = this.keys.get(object);
    if (keys === undefined) {
      keys = Object.keys(object);
      this.keys.set(object, keys);
    }
    return keys;
  }
}

/**
 * Structural equality of JSON values with no coercion (`"1"` is not `1`, key order does not matter):
 * the one equality behind `eq`, `ne` and `in`. Iterative, because the values come from the caller's
 * scope and may be nested arbitrarily deep.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return jsonEqualWithin(a, b, new WorkMeter(Number.POSITIVE_INFINITY)) as boolean;
}

/** The units of one object property compared: its pair, and the lookup of its key in the other object. */
const PROPERTY_UNITS = 3;

/**
 * `jsonEqual` that takes one unit of `meter` per pair of values it compares (three per object
 * property, one more per 64 characters of two strings of the same length, which the engine compares
 * whole), taken before the work is done, and answers undefined, undecided, once the meter is below zero.
 */
export function jsonEqualWithin(a: unknown, b: unknown, meter: WorkMeter): boolean | undefined {
  meter.left -= 1;
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (typeof x === "string" && typeof y === "string" && x.length === y.length) {
      meter.left -= x.length >>> 6;
    }
    if (meter.left < 0) return undefined;
    if (x === y) continue;
    if (typeof x !== "object" || typeof y !== "object" || x === null || y === null) return false;
    const xIsArray = Array.isArray(x);
    if (xIsArray !== Array.isArray(y)) return false;
    if (xIsArray) {
      const xs = x as unknown[];
      const ys = y as unknown[];
      if (xs.length !== ys.length) return false;
      // The units of every pair below, before any is pushed.
      meter.left -= xs.length;
      if (meter.left < 0) return undefined;
      for (let i = 0; i < xs.length; i++) stack.push(xs[i], ys[i]);
    } else {
      const xo = x as Record<string, unknown>;
      const yo = y as Record<string, unknown>;
      const keys = meter.keysOf(xo);
      if (keys.length !== meter.keysOf(yo).length) return false;
      // A property costs a lookup in the other object besides its pair: three units.
      meter.left -= keys.length * PROPERTY_UNITS;
      if (meter.left < 0) return undefined;
      for (const key of keys) {
        if (!Object.hasOwn(yo, key)) return false;
        stack.push(xo[key], yo[key]);
      }
    }
  }
  return true;
}

/**
 * A deep, frozen copy of a JSON value. A compiled expression keeps its `lit` values this way so that
 * neither later edits of the source node nor callers mutating a result can change what it evaluates to.
 * The value must already have passed `isJsonValue` (so it is acyclic); the copy is iterative.
 */
export function frozenJsonCopy(value: JsonValue): JsonValue {
  if (value === null || typeof value !== "object") return value;
  const rootCopy: JsonValue = Array.isArray(value) ? [] : {};
  const stack: Array<{ from: JsonValue[] | JsonObject; to: JsonValue[] | JsonObject }> = [
    { from: value, to: rootCopy },
  ];
  const filled: Array<JsonValue[] | JsonObject> = [];
  while (stack.length > 0) {
    const { from, to } = stack.pop() as { from: JsonValue[] | JsonObject; to: JsonValue[] | JsonObject };
    filled.push(to);
    for (const key of Object.keys(from)) {
      const child = (from as JsonObject)[key] as JsonValue;
      let copy: JsonValue = child;
      if (child !== null && typeof child === "object") {
        copy = Array.isArray(child) ? [] : {};
        stack.push({ from: child, to: copy });
      }
      // defineProperty, not assignment: a key named "__proto__" must stay an ordinary own property.
      Object.defineProperty(to, key, { value: copy, enumerable: true, writable: true, configurable: true });
    }
  }
  for (const container of filled) Object.freeze(container);
  return rootCopy;
}
