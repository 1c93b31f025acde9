import type { JsonValue } from "./json.js";
import type {
  AggFn,
  AggNode,
  BoolFn,
  BoolNode,
  CalcFn,
  CalcNode,
  CmpFn,
  CmpNode,
  ExpressionNode,
  IfNode,
  InNode,
  LitNode,
  VarNode,
  YearsSinceNode,
} from "./nodes.js";

/**
 * Typed constructors of nodes, for TypeScript that writes trees (tests, templates, fixtures): the
 * compiler checks the shape and arity-by-type where it can, so fewer malformed trees reach validation.
 * `expr.var("answers.q1.value")`, `expr.if(c, a, b)`.
 */
export const expr = {
  lit: (value: JsonValue): LitNode => ({ op: "lit", value }),
  var: (path: string): VarNode => ({ op: "var", path }),
  calc: (fn: CalcFn, ...args: ExpressionNode[]): CalcNode => ({ op: "calc", fn, args }),
  cmp: (fn: CmpFn, left: ExpressionNode, right: ExpressionNode): CmpNode => ({
    op: "cmp",
    fn,
    args: [left, right],
  }),
  bool: (fn: BoolFn, ...args: ExpressionNode[]): BoolNode => ({ op: "bool", fn, args }),
  if: (cond: ExpressionNode, then: ExpressionNode, otherwise: ExpressionNode): IfNode => ({
    op: "if",
    args: [cond, then, otherwise],
  }),
  in: (needle: ExpressionNode, haystack: ExpressionNode): InNode => ({ op: "in", args: [needle, haystack] }),
  agg: (fn: AggFn, ...args: ExpressionNode[]): AggNode => ({ op: "agg", fn, args }),
  yearsSince: (date: ExpressionNode, asOf?: ExpressionNode): YearsSinceNode => ({
    op: "years_since",
    args: asOf === undefined ? [date] : [date, asOf],
  }),
} as const;
