import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";
import type { Scope } from "./var.js";

const NOW = new Date("2025-06-15T12:00:00Z");

function yearsSince(
  date: JsonValue,
  asOf?: JsonValue,
  scope: Scope = {},
  now = NOW,
): JsonValue | "type_error" {
  const node =
    asOf === undefined ? expr.yearsSince(expr.lit(date)) : expr.yearsSince(expr.lit(date), expr.lit(asOf));
  const { value, trace } = evaluate(compileExpression(node), scope, { now });
  return trace.at(-1)?.error ?? value;
}

describe("years_since", () => {
  it.each<[string, string, number]>([
    ["2000-01-01", "2020-01-01", 20],
    ["2000-06-15", "2020-06-14", 19],
    ["2000-06-15", "2020-06-15", 20],
    ["2000-12-31", "2001-01-01", 0],
    ["2000-02-29", "2021-02-28", 20],
    ["2000-02-29", "2021-03-01", 21],
    ["2000-02-29", "2024-02-29", 24],
    ["1900-03-01", "2000-02-29", 99],
    ["0001-01-01", "9999-12-31", 9998],
    ["2020-05-05", "2020-05-05", 0],
    ["2030-01-01", "2025-06-01", -4],
    ["2030-06-01", "2025-06-01", -5],
    ["2000-01-01T00:00:00Z", "2020-01-01", 20],
    ["2000-01-01t10:20:30.123456z", "2020-01-01", 20],
    ["2000-01-01T23:30:00-02:00", "2020-01-01", 19],
    ["2000-01-01T00:30:00+01:00", "2019-12-31", 20],
    ["2000-01-01T23:59:60Z", "2020-01-01", 20],
    ["2000-01-01", "2020-01-01T01:00:00+02:00", 19],
  ])("from %s to %s is %d whole years", (date, asOf, expected) => {
    expect(yearsSince(date, asOf)).toBe(expected);
  });

  it("gives 0, never -0", () => {
    expect(Object.is(yearsSince("2025-06-01", "2025-01-01"), 0)).toBe(true);
  });

  it.each<[JsonValue]>([
    ["2021-02-30"],
    ["2021-02-29"],
    ["2021-04-31"],
    ["2021-13-01"],
    ["2021-00-10"],
    ["2021-01-00"],
    ["2021-1-1"],
    ["21-01-01"],
    ["2021-01-01T24:00:00Z"],
    ["2021-01-01T23:60:00Z"],
    ["2021-01-01T23:59:61Z"],
    ["2021-01-01T10:00:00+24:00"],
    ["2021-01-01T10:00:00+01:60"],
    ["2021-01-01T10:00:00"],
    ["2021-01-01T10:00Z"],
    [" 2021-01-01"],
    ["yesterday"],
    [""],
    [20210101],
    [true],
    [["2021-01-01"]],
    [null],
  ])("gives null, not a type error, for %j", (date) => {
    expect(yearsSince(date, "2025-01-01")).toBeNull();
    expect(yearsSince("2000-01-01", date)).toBeNull();
  });

  it("defaults as_of to context.as_of, else today in UTC from options.now", () => {
    expect(yearsSince("2000-01-01", undefined, { context: { as_of: "2010-01-01" } })).toBe(10);
    expect(yearsSince("2000-06-15", undefined)).toBe(25);
    expect(yearsSince("2000-06-16", undefined)).toBe(24);
    expect(yearsSince("2000-06-16", undefined, {}, new Date("2025-06-15T23:59:59-05:00"))).toBe(25);
    expect(yearsSince("2000-01-01", undefined, { context: { as_of: null } })).toBe(25);
    expect(yearsSince("2000-01-01", undefined, { context: "not an object" })).toBe(25);
  });

  it("uses the clock when no now is given", () => {
    const expected = new Date().getUTCFullYear() - 1900;
    expect(evaluate(compileExpression(expr.yearsSince(expr.lit("1900-01-01"))), {}).value).toBeOneOf([
      expected - 1,
      expected,
    ]);
  });

  it("gives null for an unparsable context.as_of or an invalid now, without falling back", () => {
    expect(yearsSince("2000-01-01", undefined, { context: { as_of: "soon" } })).toBeNull();
    expect(yearsSince("2000-01-01", undefined, { context: { as_of: 2020 } })).toBeNull();
    expect(yearsSince("2000-01-01", undefined, {}, new Date(Number.NaN))).toBeNull();
  });

  it("gives null when an explicit as_of is null, rather than taking the default", () => {
    const node = expr.yearsSince(expr.lit("2000-01-01"), expr.var("context.missing"));
    expect(
      evaluate(compileExpression(node), { context: { as_of: "2010-01-01" } }, { now: NOW }).value,
    ).toBeNull();
  });
});
