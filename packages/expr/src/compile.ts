import { CompiledExpression, type EvalContext, type NodeEvaluator } from "./compiled.js";
import { ExpressionInvalidError } from "./errors.js";
import { civilDateOf } from "./iso-date.js";
import { frozenJsonCopy, type JsonValue } from "./json.js";
import { appendPointer } from "./json-pointer.js";
import type { ExpressionNode } from "./nodes.js";
import { applyAgg } from "./ops/agg.js";
import { applyBool } from "./ops/bool.js";
import { applyCalc } from "./ops/calc.js";
import { applyCmp } from "./ops/cmp.js";
import { applyIn } from "./ops/in.js";
import { type OpResult, TYPE_ERROR } from "./ops/result.js";
import { readPath } from "./ops/var.js";
import { applyYearsSince } from "./ops/years-since.js";
import type { TraceStep } from "./trace.js";
import { validateExpression } from "./validate.js";

/**
 * Validates a tree and compiles it for `evaluate`. Throws `ExpressionInvalidError` (first problem as
 * `path`/`reason`, all of them as `problems`) when it is malformed, so a compiled expression is always
 * within the contract's limits and its evaluation cannot fail.
 */
export function compileExpression(node: unknown): CompiledExpression {
  const problems = validateExpression(node);
  if (problems.length > 0) throw new ExpressionInvalidError(problems);
  return compileValidated(node as ExpressionNode);
}

/** `compileExpression` for a tree already validated (scorecards validate all axes first). */
export function compileValidated(node: ExpressionNode): CompiledExpression {
  const counter = { nodes: 0 };
  // Recursion is safe here: validation has bounded the depth to 64.
  const run = build(node, "", counter);
  return new CompiledExpression(node, counter.nodes, run);
}

/**
 * Trace order: a node's step follows the steps of the args it evaluated (children before parents, args
 * left to right). Every op evaluates all its args, except `if`, which evaluates its condition and then
 * only the branch it takes (none when the condition is a type error).
 */
function build(node: ExpressionNode, path: string, counter: { nodes: number }): NodeEvaluator {
  counter.nodes += 1;
  switch (node.op) {
    case "lit": {
      const value = frozenJsonCopy(node.value);
      return (ctx) => record(ctx, path, "lit", undefined, value);
    }
    case "var": {
      const segments = node.path.split(".");
      return (ctx) => record(ctx, path, "var", undefined, readPath(ctx.scope, segments));
    }
    case "calc": {
      const { fn } = node;
      const args = buildArgs(node.args, path, counter);
      return (ctx) => record(ctx, path, "calc", fn, applyCalc(fn, evaluateAll(args, ctx)));
    }
    case "cmp": {
      const { fn } = node;
      const [left, right] = buildArgs(node.args, path, counter) as [NodeEvaluator, NodeEvaluator];
      return (ctx) => {
        const a = left(ctx);
        return record(ctx, path, "cmp", fn, applyCmp(fn, a, right(ctx)));
      };
    }
    case "bool": {
      const { fn } = node;
      const args = buildArgs(node.args, path, counter);
      return (ctx) => record(ctx, path, "bool", fn, applyBool(fn, evaluateAll(args, ctx)));
    }
    case "if": {
      const [cond, then, otherwise] = buildArgs(node.args, path, counter) as [
        NodeEvaluator,
        NodeEvaluator,
        NodeEvaluator,
      ];
      return (ctx) => {
        const c = cond(ctx);
        if (c === true) return record(ctx, path, "if", undefined, then(ctx));
        if (c === false || c === null) return record(ctx, path, "if", undefined, otherwise(ctx));
        return record(ctx, path, "if", undefined, TYPE_ERROR);
      };
    }
    case "in": {
      const [needle, haystack] = buildArgs(node.args, path, counter) as [NodeEvaluator, NodeEvaluator];
      return (ctx) => {
        const n = needle(ctx);
        return record(ctx, path, "in", undefined, applyIn(n, haystack(ctx)));
      };
    }
    case "agg": {
      const { fn } = node;
      const args = buildArgs(node.args, path, counter);
      return (ctx) => record(ctx, path, "agg", fn, applyAgg(fn, evaluateAll(args, ctx)));
    }
    case "years_since": {
      const [date, asOf] = buildArgs(node.args, path, counter) as [NodeEvaluator, NodeEvaluator | undefined];
      return (ctx) => {
        const d = date(ctx);
        const a = asOf === undefined ? defaultAsOf(ctx) : asOf(ctx);
        return record(ctx, path, "years_since", undefined, applyYearsSince(d, a));
      };
    }
  }
}

function buildArgs(
  args: readonly ExpressionNode[],
  path: string,
  counter: { nodes: number },
): NodeEvaluator[] {
  return args.map((arg, i) => build(arg, appendPointer(path, "args", i), counter));
}

function evaluateAll(args: readonly NodeEvaluator[], ctx: EvalContext): JsonValue[] {
  const values = new Array<JsonValue>(args.length);
  for (let i = 0; i < args.length; i++) values[i] = (args[i] as NodeEvaluator)(ctx);
  return values;
}

/** `years_since` without `as_of`: `context.as_of` when it is there and not null, else today (UTC). */
function defaultAsOf(ctx: EvalContext): JsonValue {
  const fromContext = readPath(ctx.scope, ["context", "as_of"]);
  if (fromContext !== null) return fromContext;
  const today = civilDateOf(ctx.now);
  if (today === null) return null;
  const pad = (n: number, width: number) => String(n).padStart(width, "0");
  return `${pad(today.year, 4)}-${pad(today.month, 2)}-${pad(today.day, 2)}`;
}

/** Appends the node's trace step and returns its value: the one place a type error becomes null. */
function record(
  ctx: EvalContext,
  path: string,
  op: string,
  fn: string | undefined,
  result: OpResult,
): JsonValue {
  const step: TraceStep = fn === undefined ? { path, op, value: null } : { path, op, fn, value: null };
  if (result === TYPE_ERROR) step.error = "type_error";
  else step.value = result;
  ctx.trace.push(step);
  return step.value;
}
