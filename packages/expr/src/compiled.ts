import type { JsonValue, WorkMeter } from "./json.js";
import type { ExpressionNode } from "./nodes.js";
import type { Scope } from "./ops/var.js";
import type { TraceStep } from "./trace.js";
import type { Tracer } from "./tracer.js";

/**
 * What one evaluation carries through the tree: the steps of this expression, and the trace budget
 * and comparison work it shares with the other axes of its scorecard. Built afresh per evaluation.
 */
export type EvalContext = { scope: Scope; now: Date; trace: TraceStep[]; tracer: Tracer; work: WorkMeter };

/** One compiled node: evaluates its subtree, appends its steps to the trace and returns its value. */
export type NodeEvaluator = (ctx: EvalContext) => JsonValue;

/** Where a compiled expression keeps its evaluator; not exported from the package. */
export const RUN: unique symbol = Symbol("run");

/**
 * A tree that passed validation, turned into closures once so that it can be evaluated many times
 * (every preview, every answer of an interview) without being checked again. Immutable: it holds
 * frozen copies of its `lit` values, not the caller's objects. Made by `compileExpression` only: the
 * constructor trusts that `run` was built from a validated `node`.
 */
export class CompiledExpression {
  /** The validated source tree, as given to the compiler. */
  readonly node: ExpressionNode;
  /** How many nodes the tree has: the most trace steps one evaluation can produce. */
  readonly nodeCount: number;
  readonly [RUN]: NodeEvaluator;

  constructor(node: ExpressionNode, nodeCount: number, run: NodeEvaluator) {
    this.node = node;
    this.nodeCount = nodeCount;
    this[RUN] = run;
  }
}
