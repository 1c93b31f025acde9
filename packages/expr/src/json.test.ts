import { describe, expect, it } from "vitest";
import { frozenJsonCopy, isJsonValue, isPlainObject, type JsonValue, jsonEqual } from "./json.js";

describe("isPlainObject", () => {
  it("accepts {} and null-prototype objects only", () => {
    expect(isPlainObject({})).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    expect(isPlainObject([])).toBe(false);
    expect(isPlainObject(null)).toBe(false);
    expect(isPlainObject(new Date())).toBe(false);
    expect(isPlainObject("x")).toBe(false);
  });
});

describe("isJsonValue", () => {
  it("accepts JSON", () => {
    for (const v of [
      null,
      true,
      0,
      -0,
      1.5,
      "",
      [],
      {},
      [1, { a: [null, "b"] }],
      JSON.parse('{"__proto__":1}'),
    ]) {
      expect(isJsonValue(v)).toBe(true);
    }
  });

  it("rejects what JSON cannot hold", () => {
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    for (const v of [
      undefined,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      () => 1,
      Symbol("s"),
      1n,
      new Date(),
      new Map(),
      [undefined],
      { a: undefined },
      { a: [1, Number.NaN] },
      cyclic,
      // biome-ignore lint/suspicious/noSparseArray: a hole is exactly what is tested
      [1, , 2],
    ]) {
      expect(isJsonValue(v)).toBe(false);
    }
  });

  it("accepts a value shared in two places (not a cycle)", () => {
    const shared = { x: [1] };
    expect(isJsonValue({ a: shared, b: [shared, shared] })).toBe(true);
  });

  it("walks very deep values without recursing", () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = { a: [deep] };
    expect(isJsonValue(deep)).toBe(true);
  });
});

describe("jsonEqual", () => {
  it("is structural and coerces nothing", () => {
    expect(jsonEqual({ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 })).toBe(true);
    expect(jsonEqual(0, -0)).toBe(true);
    expect(jsonEqual(1, "1")).toBe(false);
    expect(jsonEqual(null, {})).toBe(false);
    expect(jsonEqual([1], { 0: 1 })).toBe(false);
    expect(jsonEqual({ a: 1 }, { b: 1 })).toBe(false);
    expect(jsonEqual([1, 2], [1, 2, 3])).toBe(false);
  });
});

describe("frozenJsonCopy", () => {
  it("copies deeply and freezes every container", () => {
    const source = JSON.parse('{"a":[1,{"b":2}],"__proto__":{"c":3}}') as JsonValue;
    const copy = frozenJsonCopy(source);
    expect(copy).toEqual(source);
    expect(copy).not.toBe(source);
    expect(Object.isFrozen(copy)).toBe(true);
    const a = (copy as { a: JsonValue[] }).a;
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a[1])).toBe(true);
    expect(Object.hasOwn(copy as object, "__proto__")).toBe(true);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
  });

  it("returns scalars as they are", () => {
    expect(frozenJsonCopy("x")).toBe("x");
    expect(frozenJsonCopy(null)).toBeNull();
  });
});
