import { type CompiledExpression, RUN } from "./compiled.js";
import type { JsonValue } from "./json.js";
import type { Scope } from "./ops/var.js";
import type { EvaluateOptions, TraceStep } from "./trace.js";

/** The value of an expression and how it was reached. */
export type EvaluationResult = { value: JsonValue; trace: TraceStep[] };

/**
 * Evaluates a compiled expression against `{answers, context, signals}`. Total: it does not throw for
 * any JSON scope; a type error makes its node null and marks its trace step. The trace has one step per
 * evaluated node, children before parents; the last step is the root's, with `value`.
 */
export function evaluate(
  compiled: CompiledExpression,
  scope: Scope,
  options: EvaluateOptions = {},
): EvaluationResult {
  const trace: TraceStep[] = [];
  const value = compiled[RUN]({ scope: scope ?? {}, now: options.now ?? new Date(), trace });
  return { value, trace };
}
