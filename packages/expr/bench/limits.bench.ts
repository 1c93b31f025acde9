import {
  compileScorecard,
  type ExpressionNode,
  evaluateScorecard,
  expr,
  MAX_AXES,
  MAX_NODES,
  MAX_SCORECARD_NODES,
  type Scope,
} from "@evalp/expr";
import { test } from "vitest";
import { numericTree, prng, QUESTIONS } from "./trees.js";

/**
 * What a scorecard at the limits costs to score (docs/expressions.md#limits), which must stay within
 * 50 ms of CPU: the most axes and nodes a scorecard may have, in realistic trees and in the shapes
 * that cost the most per node (many `var`s of one large answer; comparisons that spend the whole
 * comparison work). Run: npx vitest bench --run --project "unit (bench)" packages/expr/bench/limits.bench.ts
 * (from the repository root); it measures the built package.
 */

const NOW = new Date("2025-06-15T12:00:00Z");
const bands = [{ id: "any", label: "Any", min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }];
const axis = (id: string, node: ExpressionNode) => ({ id, label: id, expr: node, bands });
const scorecard = (axes: ReturnType<typeof axis>[]) => ({ kind: "scorecard", axes });

// MAX_AXES axes sharing MAX_SCORECARD_NODES nodes, each tree generated from its own seed.
const perAxis = Math.floor(MAX_SCORECARD_NODES / MAX_AXES);
const realistic = scorecard(
  Array.from({ length: MAX_AXES }, (_, i) => axis(`a${i}`, numericTree(perAxis, prng(1_000 + i)))),
);
const random = prng(7);
const answers: Scope = {
  answers: Object.fromEntries(
    Array.from({ length: QUESTIONS }, (_, i) => [`q${i + 1}`, { value: Math.floor(random() * 10) }]),
  ),
  context: { as_of: "2025-06-15" },
};

// Two axes at the expression limit, counting `var`s of one 256 KB answer (the preview's input limit).
const counting = () =>
  expr.agg("count", ...Array.from({ length: MAX_NODES - 1 }, () => expr.var("answers.a")));
const amplifying = scorecard([axis("first", counting()), axis("second", counting())]);
const largeAnswer: Scope = { answers: { a: "x".repeat(256 * 1024 - 16) } };

// Two axes of `in` against a 100,000-item haystack: the comparison work runs out early on.
const ins = (n: number) =>
  expr.agg("count", ...Array.from({ length: n }, () => expr.in(expr.lit(1), expr.var("answers.h"))));
const searching = scorecard([
  axis("first", ins((MAX_NODES - 1) / 3)),
  axis("second", ins((MAX_NODES - 1) / 3)),
]);
const haystack: Scope = { answers: { h: Array.from({ length: 100_000 }, () => 0) } };

// Two axes of `eq` between two equal 2,000-property objects (distinct, so compared property by property).
const eqs = (n: number) =>
  expr.agg(
    "count",
    ...Array.from({ length: n }, () => expr.cmp("eq", expr.var("answers.x"), expr.var("answers.y"))),
  );
const comparing = scorecard([
  axis("first", eqs((MAX_NODES - 1) / 3)),
  axis("second", eqs((MAX_NODES - 1) / 3)),
]);
const object = () => Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`k${i}`, i]));
const objects: Scope = { answers: { x: object(), y: object() } };

const compiled = {
  realistic: compileScorecard(realistic),
  amplifying: compileScorecard(amplifying),
  searching: compileScorecard(searching),
  comparing: compileScorecard(comparing),
};

test("scorecards at the limits", async ({ bench }) => {
  await bench.compare(
    bench(`${MAX_AXES} axes, ${MAX_SCORECARD_NODES} nodes, compiled once`, () => {
      evaluateScorecard(compiled.realistic, answers, { now: NOW });
    }),
    bench(
      `${MAX_AXES} axes, ${MAX_SCORECARD_NODES} nodes, validated and compiled on every call (preview)`,
      () => {
        evaluateScorecard(realistic, answers, { now: NOW });
      },
    ),
    bench("20,000 vars of a 256 KB answer, trace cut at its budget", () => {
      evaluateScorecard(compiled.amplifying, largeAnswer, { now: NOW });
    }),
    bench("the same, validated and compiled on every call (preview)", () => {
      evaluateScorecard(amplifying, largeAnswer, { now: NOW });
    }),
    bench("6,666 `in` over 100,000 items, comparison work spent", () => {
      evaluateScorecard(compiled.searching, haystack, { now: NOW });
    }),
    bench("6,666 `eq` of 2,000-property objects, comparison work spent", () => {
      evaluateScorecard(compiled.comparing, objects, { now: NOW });
    }),
  );
});
