import { CompiledExpression, type EvalContext, type NodeEvaluator } from "./compiled.js";
import { ExpressionInvalidError } from "./errors.js";
import { civilDateOf } from "./iso-date.js";
import { frozenJsonCopy, type JsonValue } from "./json.js";
import type { ExpressionNode } from "./nodes.js";
import { applyAgg } from "./ops/agg.js";
import { applyBool } from "./ops/bool.js";
import { applyCalc } from "./ops/calc.js";
import { applyCmp } from "./ops/cmp.js";
import { applyIn } from "./ops/in.js";
import { LIMIT_EXCEEDED, type OpResult, TYPE_ERROR } from "./ops/result.js";
import { readPath } from "./ops/var.js";
import { applyYearsSince } from "./ops/years-since.js";
import { type StepSite, stepSite } from "./tracer.js";
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
  const site = stepSite(path, node.op, "fn" in node ? node.fn : undefined);
  switch (node.op) {
    case "lit": {
      const value = frozenJsonCopy(node.value);
      return (ctx) => record(ctx, site, value);
    }
    case "var": {
      const segments = node.path.split(".");
      return (ctx) => record(ctx, site, readPath(ctx.scope, segments));
    }
    case "calc": {
      const { fn } = node;
      const args = buildArgs(node.args, path, counter);
      return (ctx) => record(ctx, site, applyCalc(fn, evaluateAll(args, ctx)));
    }
    case "cmp": {
      const { fn } = node;
      const [left, right] = buildArgs(node.args, path, counter) as [NodeEvaluator, NodeEvaluator];
      return (ctx) => {
        const a = left(ctx);
        return record(ctx, site, applyCmp(fn, a, right(ctx), ctx.work));
      };
    }
    case "bool": {
      const { fn } = node;
      const args = buildArgs(node.args, path, counter);
      return (ctx) => record(ctx, site, applyBool(fn, evaluateAll(args, ctx)));
    }
    case "if": {
      const [cond, then, otherwise] = buildArgs(node.args, path, counter) as [
        NodeEvaluator,
        NodeEvaluator,
        NodeEvaluator,
      ];
      return (ctx) => {
        const c = cond(ctx);
        if (c === true) return record(ctx, site, then(ctx));
        if (c === false || c === null) return record(ctx, site, otherwise(ctx));
        return record(ctx, site, TYPE_ERROR);
      };
    }
    case "in": {
      const [needle, haystack] = buildArgs(node.args, path, counter) as [NodeEvaluator, NodeEvaluator];
      return (ctx) => {
        const n = needle(ctx);
        return record(ctx, site, applyIn(n, haystack(ctx), ctx.work));
      };
    }
    case "agg": {
      const { fn } = node;
      const args = buildArgs(node.args, path, counter);
      return (ctx) => record(ctx, site, applyAgg(fn, evaluateAll(args, ctx)));
    }
    case "years_since": {
      const [date, asOf] = buildArgs(node.args, path, counter) as [NodeEvaluator, NodeEvaluator | undefined];
      return (ctx) => {
        const d = date(ctx);
        const a = asOf === undefined ? defaultAsOf(ctx) : asOf(ctx);
        return record(ctx, site, applyYearsSince(d, a));
      };
    }
  }
}

function buildArgs(
  args: readonly ExpressionNode[],
  path: string,
  counter: { nodes: number },
): NodeEvaluator[] {
  // `/args/<i>` needs no escaping, so the pointer is appended as is (this runs once per node).
  return args.map((arg, i) => build(arg, `${path}/args/${i}`, counter));
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

/**
 * Appends the node's trace step (within the trace's budget) and returns its value: the one place a
 * type error or a comparison past its work limit becomes null.
 */
function record(ctx: EvalContext, site: StepSite, result: OpResult): JsonValue {
  if (result === TYPE_ERROR) {
    ctx.tracer.record(ctx.trace, site, null, "type_error");
    return null;
  }
  if (result === LIMIT_EXCEEDED) {
    ctx.tracer.record(ctx.trace, site, null, "limit_exceeded");
    return null;
  }
  ctx.tracer.record(ctx.trace, site, result, undefined);
  return result;
}
