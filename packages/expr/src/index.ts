/**
 * @evalp/expr: the expression language of docs/expressions.md (scorecard axes, adaptive-policy and guardrail
 * `when`s). Pure: no I/O, no runtime dependencies, deterministic given `options.now`.
 */

export { expr } from "./builders.js";
export { compileExpression } from "./compile.js";
export { CompiledExpression } from "./compiled.js";
export { ExpressionInvalidError } from "./errors.js";
export { type EvaluationResult, evaluate } from "./evaluate.js";
export { isJsonValue, type JsonObject, type JsonValue, jsonEqual } from "./json.js";
export { appendPointer, escapePointerToken, resolvePointer } from "./json-pointer.js";
export {
  MAX_AXES,
  MAX_COMPARISON_WORK,
  MAX_SCORECARD_NODES,
  TRACE_BUDGET_BYTES,
  TRACE_VALUE_MAX_BYTES,
} from "./limits.js";
export {
  AGG_FNS,
  type AggFn,
  type AggNode,
  BOOL_FNS,
  type BoolFn,
  type BoolNode,
  CALC_FNS,
  type CalcFn,
  type CalcNode,
  CMP_FNS,
  type CmpFn,
  type CmpNode,
  type ExpressionNode,
  type IfNode,
  type InNode,
  type LitNode,
  MAX_DEPTH,
  MAX_NODES,
  type Op,
  VAR_ROOTS,
  type VarNode,
  type YearsSinceNode,
} from "./nodes.js";
export type { Scope } from "./ops/var.js";
export {
  type AxisResult,
  type Band,
  type CompiledAxis,
  CompiledScorecard,
  compileScorecard,
  evaluateScorecard,
  type ScorecardResult,
  type ScorecardTrace,
  validateScorecard,
} from "./scorecard.js";
export type { EvaluateOptions, OmittedValue, TraceError, TraceStep } from "./trace.js";
export { type ExpressionProblem, type ValidateOptions, validateExpression } from "./validate.js";
