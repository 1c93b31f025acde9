import { describe, expect, it } from "vitest";
import { expr } from "./builders.js";
import { compileExpression } from "./compile.js";
import { ExpressionInvalidError } from "./errors.js";
import { evaluate } from "./evaluate.js";
import type { JsonValue } from "./json.js";
import {
  MAX_AXES,
  MAX_COMPARISON_WORK,
  MAX_SCORECARD_NODES,
  TRACE_BUDGET_BYTES,
  TRACE_VALUE_MAX_BYTES,
} from "./limits.js";
import { type ExpressionNode, MAX_NODES } from "./nodes.js";
import { CompiledScorecard, compileScorecard, evaluateScorecard, validateScorecard } from "./scorecard.js";
import { boundedJsonBytes, stepSite, utf8Bytes } from "./tracer.js";

const NOW = new Date("2025-06-15T12:00:00Z");
const bytesOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
const axis = (id: string, node: ExpressionNode) => ({ id, label: id, expr: node, bands: [] });
const vars = (n: number, path = "answers.a") => Array.from({ length: n }, () => expr.var(path));

describe("the trace's value limit", () => {
  it("keeps a value of up to TRACE_VALUE_MAX_BYTES and replaces a larger one by a marker", () => {
    // A JSON string of exactly the limit: the quotes take 2 bytes.
    const fits = "a".repeat(TRACE_VALUE_MAX_BYTES - 2);
    const over = `${fits}a`;
    const { value, trace } = evaluate(
      compileExpression(expr.agg("count", expr.var("answers.fits"), expr.var("answers.over"))),
      { answers: { fits, over } },
      { now: NOW },
    );
    expect(value).toBe(2);
    expect(trace).toEqual([
      { path: "/args/0", op: "var", value: fits },
      { path: "/args/1", op: "var", value: null, value_omitted: { type: "string", size: over.length } },
      { path: "", op: "agg", fn: "count", value: 2 },
    ]);
  });

  it("gives arrays their item count and objects their property count, and leaves the value itself whole", () => {
    const array = Array.from({ length: 600 }, (_, i) => i);
    const object = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, i]));
    const big = compileExpression(expr.if(expr.lit(true), expr.var("answers.array"), expr.lit(0)));
    const result = evaluate(big, { answers: { array } }, { now: NOW });
    // The value is computed in full: only its trace step omits it.
    expect(result.value).toEqual(array);
    expect(result.trace.map((step) => step.value_omitted)).toEqual([
      undefined,
      { type: "array", size: 600 },
      { type: "array", size: 600 },
    ]);
    const lit = evaluate(compileExpression(expr.lit(object)), {}, { now: NOW });
    expect(lit.trace).toEqual([
      { path: "", op: "lit", value: null, value_omitted: { type: "object", size: 300 } },
    ]);
  });

  it("measures a value as its UTF-8 JSON, escapes and multi-byte characters included", () => {
    const samples: JsonValue[] = [
      null,
      true,
      false,
      -0.5,
      1e21,
      "",
      'quote " and \\ and \n and \u0001',
      "é ü 中文 😀",
      "\ud800 lone surrogate",
      [1, "two", [null, { "k\u00e9y": [] }]],
      { a: { b: { c: "déjà" } }, "": [true] },
    ];
    for (const sample of samples) expect(boundedJsonBytes(sample, 10_000)).toBe(bytesOf(sample));
    expect(utf8Bytes("é中😀")).toBe(Buffer.byteLength("é中😀"));
    // A step's own bytes are counted, not serialized: the same as its JSON with a comma after it.
    for (const [path, op, fn] of [
      ["", "lit", undefined],
      ["/args/0/args/12", "calc", "round"],
      ["/args/9999", "years_since", undefined],
    ] as const) {
      const shell = fn === undefined ? { path, op, value: null } : { path, op, fn, value: null };
      expect(stepSite(path, op, fn).bytes).toBe(bytesOf(shell) - 4 + 1);
    }
    // Past the limit it stops early, with some number above it.
    expect(
      boundedJsonBytes(
        Array.from({ length: 5_000 }, () => "x"),
        100,
      ),
    ).toBeGreaterThan(100);
  });
});

describe("the trace's budget", () => {
  // Two axes of 9,999 `var`s of a 10 KB answer: 20,000 steps, far more than the budget holds.
  const scorecard = compileScorecard({
    kind: "scorecard",
    axes: [
      axis("first", expr.agg("count", ...vars(MAX_NODES - 1))),
      axis("second", expr.agg("count", ...vars(MAX_NODES - 1))),
    ],
  });
  const answers = { a: "x".repeat(10_000), small: 1 };

  it("cuts the trace at the budget, counts what it left out and still scores every axis", () => {
    const result = evaluateScorecard(scorecard, { answers }, { now: NOW });
    expect(result.axes.map((a) => a.score)).toEqual([MAX_NODES - 1, MAX_NODES - 1]);
    const { trace } = result;
    expect(bytesOf(trace)).toBeLessThanOrEqual(TRACE_BUDGET_BYTES);
    // Close to the budget: the steps are measured, not guessed high.
    expect(bytesOf(trace)).toBeGreaterThan(TRACE_BUDGET_BYTES - 200);
    expect(trace.truncated).toBe(true);
    const recorded = (trace.axes.first?.length ?? 0) + (trace.axes.second?.length ?? 0);
    expect(recorded + (trace.omitted_steps ?? 0)).toBe(2 * MAX_NODES);
    // The steps kept are the first ones, in evaluation order.
    expect(trace.axes.first?.[0]).toEqual({
      path: "/args/0",
      op: "var",
      value: null,
      value_omitted: { type: "string", size: 10_000 },
    });
    expect(Object.keys(trace)).toEqual(["axes", "truncated", "omitted_steps"]);
  });

  it("holds the budget exactly, whatever the values and the axis ids", () => {
    const values = ["", "a", "é".repeat(300), "😀".repeat(200), { k: "v".repeat(900) }, 12345.678];
    for (const [i, value] of values.entries()) {
      const id = `axis ${"é".repeat(i * 50)}`;
      const card = compileScorecard({
        kind: "scorecard",
        axes: [
          axis(id, expr.agg("count", ...vars(MAX_NODES - 1))),
          axis("b", expr.agg("sum", ...vars(5_000))),
        ],
      });
      const { trace } = evaluateScorecard(card, { answers: { a: value } }, { now: NOW });
      expect(bytesOf(trace)).toBeLessThanOrEqual(TRACE_BUDGET_BYTES);
    }
  });

  it("leaves a trace within its budget as it was, with no marker", () => {
    const small = compileScorecard({ kind: "scorecard", axes: [axis("s", expr.var("answers.small"))] });
    const { trace } = evaluateScorecard(small, { answers }, { now: NOW });
    expect(trace).toEqual({ axes: { s: [{ path: "", op: "var", value: 1 }] } });
  });

  it("counts omitted steps of a single expression too", () => {
    const result = evaluate(
      compileExpression(expr.agg("count", ...vars(MAX_NODES - 1))),
      { answers },
      { now: NOW },
    );
    expect(result.value).toBe(MAX_NODES - 1);
    expect(bytesOf(result.trace)).toBeLessThanOrEqual(TRACE_BUDGET_BYTES);
    expect(result.trace.length + result.omittedSteps).toBe(MAX_NODES);
  });
});

describe("the scorecard limits", () => {
  it(`refuses more than ${MAX_AXES} axes`, () => {
    const axes = Array.from({ length: MAX_AXES + 1 }, (_, i) => axis(`a${i}`, expr.lit(1)));
    expect(validateScorecard({ kind: "scorecard", axes })).toEqual([
      { path: "/axes", reason: `scorecard has more than ${MAX_AXES} axes` },
    ]);
    expect(validateScorecard({ kind: "scorecard", axes: axes.slice(1) })).toEqual([]);
  });

  it(`refuses more than ${MAX_SCORECARD_NODES} nodes across the axes, at the axis that passes it`, () => {
    // Two expressions at their own limit are the scorecard's whole allowance.
    expect(MAX_SCORECARD_NODES).toBe(2 * MAX_NODES);
    const full = axis("full", expr.agg("count", ...vars(MAX_NODES - 1)));
    const atLimit = { kind: "scorecard", axes: [full, { ...full, id: "full2" }] };
    expect(validateScorecard(atLimit)).toEqual([]);
    const over = { kind: "scorecard", axes: [...atLimit.axes, axis("one", expr.lit(1))] };
    const at = `/axes/${atLimit.axes.length}/expr`;
    expect(validateScorecard(over)).toEqual([
      { path: at, reason: `scorecard has more than ${MAX_SCORECARD_NODES} nodes across its axes` },
    ]);
    expect(() => compileScorecard(over)).toThrow(ExpressionInvalidError);
    expect(() => evaluateScorecard(over, {}, { now: NOW })).toThrow(
      `scorecard has more than ${MAX_SCORECARD_NODES} nodes across its axes (at ${at})`,
    );
  });

  it("holds for scorecards put together from compiled expressions, at evaluation", () => {
    const one = compileExpression(expr.agg("count", ...vars(MAX_NODES - 1)));
    const axes = [0, 1, 2].map((i) => ({ id: `a${i}`, label: "A", expr: one, bands: [] }));
    expect(() => new CompiledScorecard(axes)).toThrow(
      expect.objectContaining({ path: "/axes/2/expr", name: "ExpressionInvalidError" }),
    );
    const many = Array.from({ length: MAX_AXES + 1 }, (_, i) => ({
      id: `a${i}`,
      label: "A",
      expr: compileExpression(expr.lit(1)),
      bands: [],
    }));
    expect(() => new CompiledScorecard(many)).toThrow(expect.objectContaining({ path: "/axes" }));
  });
});

describe("the comparison work limit", () => {
  // An array of 100,000 zeros: every `in` of a missing needle steps through all of it.
  const haystack = Array.from({ length: 100_000 }, () => 0);
  const perIn = haystack.length;
  const allowed = Math.floor(MAX_COMPARISON_WORK / perIn);

  it("makes a comparison past the limit null with limit_exceeded, and the ones before it exact", () => {
    const node = expr.agg(
      "count",
      ...Array.from({ length: allowed + 5 }, () => expr.in(expr.lit(1), expr.var("answers.h"))),
    );
    const { value, trace } = evaluate(compileExpression(node), { answers: { h: haystack } }, { now: NOW });
    const ins = trace.filter((step) => step.op === "in");
    // Each `in` before the limit answers false (and `count` counts it); the rest are null.
    expect(ins.slice(0, allowed - 1).every((step) => step.value === false && step.error === undefined)).toBe(
      true,
    );
    expect(ins.slice(allowed).every((step) => step.value === null && step.error === "limit_exceeded")).toBe(
      true,
    );
    expect(value).toBeGreaterThanOrEqual(allowed - 1);
    expect(value).toBeLessThanOrEqual(allowed);
  });

  it("bounds eq on large equal values and the ordering of long strings alike", () => {
    const a = Array.from({ length: 50_000 }, (_, i) => ({ i }));
    const b = Array.from({ length: 50_000 }, (_, i) => ({ i }));
    const eqs = Array.from({ length: 40 }, () =>
      expr.cmp("eq", expr.var("answers.a"), expr.var("answers.b")),
    );
    const eq = evaluate(compileExpression(expr.agg("count", ...eqs)), { answers: { a, b } }, { now: NOW });
    const eqSteps = eq.trace.filter((step) => step.op === "cmp");
    expect(eqSteps[0]).toEqual({ path: "/args/0", op: "cmp", fn: "eq", value: true });
    expect(eqSteps.at(-1)?.error).toBe("limit_exceeded");

    const s = `${"s".repeat(200_000)}1`;
    const t = `${"s".repeat(200_000)}2`;
    const lts = Array.from({ length: 40 }, () =>
      expr.cmp("lt", expr.var("answers.s"), expr.var("answers.t")),
    );
    const lt = evaluate(compileExpression(expr.agg("count", ...lts)), { answers: { s, t } }, { now: NOW });
    const ltSteps = lt.trace.filter((step) => step.op === "cmp");
    expect(ltSteps[0]?.value).toBe(true);
    expect(ltSteps.at(-1)).toMatchObject({ value: null, error: "limit_exceeded" });
  });

  it("does not read a string longer than any date in years_since", () => {
    const long = `2020-01-01T00:00:00.${"1".repeat(100)}Z`;
    const node = expr.yearsSince(expr.var("answers.d"), expr.lit("2025-01-01"));
    expect(evaluate(compileExpression(node), { answers: { d: long } }, { now: NOW }).value).toBeNull();
    expect(evaluate(compileExpression(node), { answers: { d: "2020-01-01T00:00:00.123456Z" } }).value).toBe(
      5,
    );
  });
});
