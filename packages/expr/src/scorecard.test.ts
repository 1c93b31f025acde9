import { describe, expect, it } from "vitest";
import { expr } from "./builders.js";
import { ExpressionInvalidError } from "./errors.js";
import { resolvePointer } from "./json-pointer.js";
import { CompiledScorecard, compileScorecard, evaluateScorecard, validateScorecard } from "./scorecard.js";

const NOW = new Date("2025-06-15T12:00:00Z");

const bands = [
  { id: "low", label: "Low", min: 0, max: 5 },
  { id: "high", label: "High", min: 5, max: 10 },
];

const scorecard = {
  kind: "scorecard",
  axes: [
    {
      id: "skill",
      label: "Skill",
      expr: expr.calc("add", expr.var("answers.q1.value"), expr.var("answers.q2.value")),
      bands,
    },
    { id: "age", label: "Age", expr: expr.yearsSince(expr.var("answers.dob.text")), bands: [] },
  ],
};

const score = (q1: unknown, q2: unknown = 0) =>
  evaluateScorecard(scorecard, { answers: { q1: { value: q1 }, q2: { value: q2 } } }, { now: NOW }).axes[0];

describe("evaluateScorecard", () => {
  it("scores each axis and traces it by axis id", () => {
    const result = evaluateScorecard(
      scorecard,
      { answers: { q1: { value: 3 }, q2: { value: 1 }, dob: { text: "2000-06-16" } } },
      { now: NOW },
    );
    expect(result.axes).toEqual([
      { axis: "skill", label: "Skill", score: 4, band_id: "low", band_label: "Low" },
      { axis: "age", label: "Age", score: 24, band_id: null, band_label: null },
    ]);
    expect(result.trace.axes.skill).toEqual([
      { path: "/args/0", op: "var", value: 3 },
      { path: "/args/1", op: "var", value: 1 },
      { path: "", op: "calc", fn: "add", value: 4 },
    ]);
    expect(Object.keys(result.trace.axes)).toEqual(["skill", "age"]);
  });

  it("puts a score in the band where min <= score < max", () => {
    expect(score(0)).toMatchObject({ score: 0, band_id: "low", band_label: "Low" });
    expect(score(4.99)).toMatchObject({ band_id: "low" });
    expect(score(5)).toMatchObject({ band_id: "high", band_label: "High" });
    expect(score(9.5)).toMatchObject({ band_id: "high" });
    expect(score(10)).toMatchObject({ score: 10, band_id: null, band_label: null });
    expect(score(-1)).toMatchObject({ score: -1, band_id: null });
  });

  it("scores null, with no band, when the expression is null or not a number", () => {
    expect(score(null)).toEqual({
      axis: "skill",
      label: "Skill",
      score: null,
      band_id: null,
      band_label: null,
    });
    expect(score("3")).toMatchObject({ score: null, band_id: null });
    const boolAxis = {
      kind: "scorecard",
      axes: [{ id: "b", label: "B", expr: expr.lit(true), bands: [{ id: "x", label: "X", min: 0, max: 2 }] }],
    };
    expect(evaluateScorecard(boolAxis, {}).axes[0]).toMatchObject({ score: null, band_id: null });
  });

  it("takes the first matching band when bands overlap", () => {
    const overlapping = {
      kind: "scorecard",
      axes: [
        {
          id: "a",
          label: "A",
          expr: expr.lit(3),
          bands: [
            { id: "wide", label: "Wide", min: 0, max: 10 },
            { id: "narrow", label: "Narrow", min: 2, max: 4 },
          ],
        },
      ],
    };
    expect(evaluateScorecard(overlapping, {}).axes[0]?.band_id).toBe("wide");
  });

  it("keeps an axis id such as __proto__ as an ordinary key of the trace", () => {
    const odd = { kind: "scorecard", axes: [{ id: "__proto__", label: "P", expr: expr.lit(1), bands: [] }] };
    const result = evaluateScorecard(odd, {});
    expect(Object.hasOwn(result.trace.axes, "__proto__")).toBe(true);
    expect(JSON.parse(JSON.stringify(result.trace))).toEqual({
      axes: JSON.parse('{"__proto__":[{"path":"","op":"lit","value":1}]}'),
    });
  });

  it("accepts a compiled scorecard, and gives every axis the same today", () => {
    const compiled = compileScorecard(scorecard);
    expect(compiled).toBeInstanceOf(CompiledScorecard);
    expect(compiled.axes.map((a) => a.id)).toEqual(["skill", "age"]);
    const result = evaluateScorecard(compiled, { answers: { dob: { text: "2000-01-01" } } });
    expect(result.axes[1]?.score).toBeGreaterThanOrEqual(25);
  });

  it("throws ExpressionInvalidError with paths from the content's root", () => {
    const broken = structuredClone(scorecard) as { axes: Array<{ expr: unknown }> };
    (broken.axes[1] as { expr: unknown }).expr = {
      op: "calc",
      fn: "add",
      args: [expr.lit(1), { op: "nope" }],
    };
    expect(() => evaluateScorecard(broken, {})).toThrow(ExpressionInvalidError);
    try {
      compileScorecard(broken);
    } catch (e) {
      expect((e as ExpressionInvalidError).path).toBe("/axes/1/expr/args/1");
      expect((e as ExpressionInvalidError).reason).toBe('unknown op "nope"');
      expect(resolvePointer(broken, (e as ExpressionInvalidError).path)).toEqual({ op: "nope" });
    }
    expect.assertions(4);
  });
});

describe("validateScorecard", () => {
  it("accepts a valid scorecard, extra content fields, and empty axes or bands", () => {
    expect(validateScorecard(scorecard)).toEqual([]);
    expect(validateScorecard({ kind: "scorecard", axes: [], title: "extra" })).toEqual([]);
    expect(
      validateScorecard({
        kind: "scorecard",
        axes: [{ id: "a", label: "", expr: expr.lit(1), bands: [], weight: 2 }],
      }),
    ).toEqual([]);
  });

  it("reports the content's own shape", () => {
    expect(validateScorecard(null)).toEqual([{ path: "", reason: "scorecard content must be an object" }]);
    expect(validateScorecard([])).toEqual([{ path: "", reason: "scorecard content must be an object" }]);
    expect(validateScorecard({ axes: [] })).toEqual([{ path: "", reason: 'property "kind" is required' }]);
    expect(validateScorecard({ kind: "experience", axes: [] })).toEqual([
      { path: "/kind", reason: 'kind must be "scorecard"' },
    ]);
    expect(validateScorecard({ kind: "scorecard" })).toEqual([
      { path: "", reason: 'property "axes" is required' },
    ]);
    expect(validateScorecard({ kind: "scorecard", axes: {} })).toEqual([
      { path: "/axes", reason: "axes must be an array" },
    ]);
  });

  it("reports axes: shape, ids (unique), labels, expr and bands", () => {
    const content = {
      kind: "scorecard",
      axes: [
        "axis",
        { label: "No id", expr: expr.lit(1), bands: [] },
        { id: "", label: 1, expr: expr.lit(1), bands: [] },
        { id: "a", label: "A", expr: expr.lit(1), bands: [] },
        { id: "a", expr: expr.lit(1) },
        { id: "b", label: "B", bands: {} },
      ],
    };
    expect(validateScorecard(content)).toEqual([
      { path: "/axes/0", reason: "axis must be an object" },
      { path: "/axes/1", reason: 'property "id" is required' },
      { path: "/axes/2/id", reason: "axis id must be a non-empty string" },
      { path: "/axes/2/label", reason: "label must be a string" },
      { path: "/axes/4/id", reason: 'duplicate axis id "a"' },
      { path: "/axes/4", reason: 'property "label" is required' },
      { path: "/axes/4", reason: 'property "bands" is required' },
      { path: "/axes/5", reason: 'property "expr" is required' },
      { path: "/axes/5/bands", reason: "bands must be an array" },
    ]);
  });

  it("reports bands: shape, ids unique within an axis, numeric min < max", () => {
    const content = {
      kind: "scorecard",
      axes: [
        {
          id: "a",
          label: "A",
          expr: expr.lit(1),
          bands: [
            7,
            { id: "x", label: "X", min: 0, max: 1 },
            { id: "x", label: "X2", min: 1, max: 2 },
            { id: "y", label: "Y", min: "0", max: null },
            { id: "z", label: "Z" },
            { id: "w", label: "W", min: 2, max: 2 },
            { id: "v", label: "V", min: 3, max: 1 },
            { id: "u", label: "U", min: Number.NaN, max: 1 },
          ],
        },
        { id: "b", label: "B", expr: expr.lit(1), bands: [{ id: "x", label: "X", min: 0, max: 1 }] },
      ],
    };
    expect(validateScorecard(content)).toEqual([
      { path: "/axes/0/bands/0", reason: "band must be an object" },
      { path: "/axes/0/bands/2/id", reason: 'duplicate band id "x"' },
      { path: "/axes/0/bands/3/min", reason: "band min must be a number" },
      { path: "/axes/0/bands/3/max", reason: "band max must be a number" },
      { path: "/axes/0/bands/4", reason: 'property "min" is required' },
      { path: "/axes/0/bands/4", reason: 'property "max" is required' },
      { path: "/axes/0/bands/5", reason: "band min must be less than max" },
      { path: "/axes/0/bands/6", reason: "band min must be less than max" },
      { path: "/axes/0/bands/7/min", reason: "band min must be a number" },
    ]);
  });

  it("reports every expression problem with its path from the content's root, limits per axis", () => {
    let deep: unknown = expr.lit(true);
    for (let i = 0; i < 1_000; i++) deep = { op: "bool", fn: "not", args: [deep] };
    const content = {
      kind: "scorecard",
      axes: [
        {
          id: "a",
          label: "A",
          expr: { op: "calc", fn: "add", args: [expr.lit(1), { op: "lit" }] },
          bands: [],
        },
        { id: "b", label: "B", expr: deep, bands: [] },
        {
          id: "c",
          label: "C",
          expr: expr.agg("count", ...Array.from({ length: 9_999 }, () => expr.lit(1))),
          bands: [],
        },
      ],
    };
    expect(validateScorecard(content)).toEqual([
      { path: "/axes/0/expr/args/1", reason: 'property "value" is required' },
      { path: `/axes/1/expr${"/args/0".repeat(64)}`, reason: "expression is deeper than 64 levels" },
    ]);
  });
});
