import {
  compileExpression,
  compileScorecard,
  type ExpressionNode,
  evaluateScorecard,
  expr,
  type Scope,
} from "@evalp/expr";
import { test } from "vitest";
import { numericTree, prng, QUESTIONS } from "./trees.js";

/**
 * What one scorecard evaluation costs: a 500-node axis expression (generated from a fixed seed, so
 * every run measures the same tree) against sample answers, beside a 1-node scorecard as the baseline.
 * Run: npx vitest bench --run --project "unit (bench)" (from the repository root). It measures
 * the built package, imported by its name as the services import it (typecheck builds it first).
 */

const NOW = new Date("2025-06-15T12:00:00Z");

const bands = [
  { id: "low", label: "Low", min: Number.MIN_SAFE_INTEGER, max: 0 },
  { id: "mid", label: "Mid", min: 0, max: 100 },
  { id: "high", label: "High", min: 100, max: Number.MAX_SAFE_INTEGER },
];
const scorecardOf = (node: ExpressionNode) => ({
  kind: "scorecard",
  axes: [{ id: "axis", label: "Axis", expr: node, bands }],
});

const bigTree = numericTree(500, prng(20_250_615));
const nodes = compileExpression(bigTree).nodeCount;
if (nodes !== 500) throw new Error(`the generated tree has ${nodes} nodes, not 500`);

const big = scorecardOf(bigTree);
const tiny = scorecardOf(expr.lit(1));
const bigCompiled = compileScorecard(big);
const tinyCompiled = compileScorecard(tiny);

const random = prng(7);
const scope: Scope = {
  answers: Object.fromEntries(
    Array.from({ length: QUESTIONS }, (_, i) => [`q${i + 1}`, { value: Math.floor(random() * 10) }]),
  ),
  context: { as_of: "2025-06-15" },
};

test("scorecard evaluation", async ({ bench }) => {
  // One comparison: the table shows each case against the 1-node baseline.
  await bench.compare(
    bench("1-node scorecard, compiled once (baseline)", () => {
      evaluateScorecard(tinyCompiled, scope, { now: NOW });
    }),
    bench("500-node scorecard, compiled once", () => {
      evaluateScorecard(bigCompiled, scope, { now: NOW });
    }),
    bench("500-node scorecard, validated and compiled on every call", () => {
      evaluateScorecard(big, scope, { now: NOW });
    }),
  );
});
