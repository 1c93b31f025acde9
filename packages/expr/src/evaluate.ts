import { type CompiledExpression, type EvalContext, RUN } from "./compiled.js";
import { type JsonValue, WorkMeter } from "./json.js";
import { MAX_COMPARISON_WORK, TRACE_BUDGET_BYTES, TRACE_VALUE_MAX_BYTES } from "./limits.js";
import type { Scope } from "./ops/var.js";
import type { EvaluateOptions, TraceStep } from "./trace.js";
import { Tracer } from "./tracer.js";

/**
 * The value of an expression and how it was reached: the trace's steps, and how many steps were left
 * out because the trace reached its budget (0 when it is complete).
 */
export type EvaluationResult = { value: JsonValue; trace: TraceStep[]; omittedSteps: number };

/**
 * Evaluates a compiled expression against `{answers, context, signals}`. Total: it does not throw for
 * any JSON scope; a type error, or a comparison past the work limit, makes its node null and marks its
 * trace step. The trace has one step per evaluated node, children before parents, until it reaches its
 * budget (docs/expressions.md#the-trace); when complete, the last step is the root's, with `value`.
 */
export function evaluate(
  compiled: CompiledExpression,
  scope: Scope,
  options: EvaluateOptions = {},
): EvaluationResult {
  const ctx = newContext(scope, options.now ?? new Date());
  const value = runExpression(compiled, ctx);
  return { value, trace: ctx.trace, omittedSteps: ctx.tracer.omitted };
}

/**
 * A fresh evaluation: the whole comparison work, an empty trace, and the trace budget less
 * `reserved` bytes (what the caller puts around the steps).
 */
export function newContext(scope: Scope, now: Date, reserved = 2): EvalContext {
  return {
    scope: scope ?? {},
    now,
    trace: [],
    tracer: new Tracer(TRACE_BUDGET_BYTES - reserved, TRACE_VALUE_MAX_BYTES),
    work: new WorkMeter(MAX_COMPARISON_WORK),
  };
}

/** Runs one expression in `ctx`, its steps appended to `ctx.trace`. */
export function runExpression(compiled: CompiledExpression, ctx: EvalContext): JsonValue {
  return compiled[RUN](ctx);
}
