import type { JsonValue } from "./json.js";

/**
 * The node catalog of docs/expressions.md: which ops exist, which properties each allows, which `fn`s and how
 * many `args`. The validator is driven by these tables and the compiler trusts them, so a node that
 * passes validation is exactly one of the `ExpressionNode` shapes below.
 */

/** Limits per expression (docs/expressions.md): the longest root-to-leaf chain counts nodes, the root is 1. */
export const MAX_DEPTH = 64;
/** Limits per expression (docs/expressions.md): every node counts, `lit` values are one node however large. */
export const MAX_NODES = 10_000;

/** The first segment of every `var` path: the three parts of an evaluation's scope. */
export const VAR_ROOTS = ["answers", "context", "signals"] as const;
export type VarRoot = (typeof VAR_ROOTS)[number];

export const CALC_FNS = [
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "pow",
  "neg",
  "abs",
  "floor",
  "ceil",
  "round",
] as const;
export type CalcFn = (typeof CALC_FNS)[number];
export const CMP_FNS = ["eq", "ne", "lt", "lte", "gt", "gte"] as const;
export type CmpFn = (typeof CMP_FNS)[number];
export const BOOL_FNS = ["and", "or", "not"] as const;
export type BoolFn = (typeof BOOL_FNS)[number];
export const AGG_FNS = ["sum", "min", "max", "median", "count"] as const;
export type AggFn = (typeof AGG_FNS)[number];

/** `{op: "lit", value}`: any JSON value, returned as is. */
export type LitNode = { op: "lit"; value: JsonValue };
/** `{op: "var", path}`: a dotted path into `{answers, context, signals}`; absent gives null. */
export type VarNode = { op: "var"; path: string };
export type CalcNode = { op: "calc"; fn: CalcFn; args: ExpressionNode[] };
export type CmpNode = { op: "cmp"; fn: CmpFn; args: [ExpressionNode, ExpressionNode] };
export type BoolNode = { op: "bool"; fn: BoolFn; args: ExpressionNode[] };
export type IfNode = { op: "if"; args: [ExpressionNode, ExpressionNode, ExpressionNode] };
export type InNode = { op: "in"; args: [ExpressionNode, ExpressionNode] };
export type AggNode = { op: "agg"; fn: AggFn; args: ExpressionNode[] };
export type YearsSinceNode = { op: "years_since"; args: [ExpressionNode] | [ExpressionNode, ExpressionNode] };

/** A node that passed `validateExpression`: the input of the compiler and of generators in tests. */
export type ExpressionNode =
  | LitNode
  | VarNode
  | CalcNode
  | CmpNode
  | BoolNode
  | IfNode
  | InNode
  | AggNode
  | YearsSinceNode;

export type Op = ExpressionNode["op"];

/** How many args a node takes: `min` to `max` inclusive, `max` infinite for "any count ≥ min". */
export type Arity = { readonly min: number; readonly max: number };

const exactly = (n: number): Arity => ({ min: n, max: n });
const atLeast = (n: number): Arity => ({ min: n, max: Number.POSITIVE_INFINITY });
const between = (min: number, max: number): Arity => ({ min, max });

/** What one op allows: its properties (all required) and either per-`fn` arities or one arity. */
export type OpSpec = {
  readonly props: readonly string[];
  readonly fns?: Readonly<Record<string, Arity>>;
  readonly arity?: Arity;
};

/**
 * The table behind validation. `agg` takes any number of args, none included: with no values left
 * after dropping nulls it already has a defined result (null, or 0 for `count`).
 */
export const OP_SPECS: Readonly<Record<Op, OpSpec>> = {
  lit: { props: ["op", "value"] },
  var: { props: ["op", "path"] },
  calc: {
    props: ["op", "fn", "args"],
    fns: {
      add: atLeast(1),
      mul: atLeast(1),
      sub: exactly(2),
      div: exactly(2),
      mod: exactly(2),
      pow: exactly(2),
      neg: exactly(1),
      abs: exactly(1),
      floor: exactly(1),
      ceil: exactly(1),
      round: between(1, 2),
    } satisfies Record<CalcFn, Arity>,
  },
  cmp: {
    props: ["op", "fn", "args"],
    fns: {
      eq: exactly(2),
      ne: exactly(2),
      lt: exactly(2),
      lte: exactly(2),
      gt: exactly(2),
      gte: exactly(2),
    } satisfies Record<CmpFn, Arity>,
  },
  bool: {
    props: ["op", "fn", "args"],
    fns: { and: atLeast(1), or: atLeast(1), not: exactly(1) } satisfies Record<BoolFn, Arity>,
  },
  if: { props: ["op", "args"], arity: exactly(3) },
  in: { props: ["op", "args"], arity: exactly(2) },
  agg: {
    props: ["op", "fn", "args"],
    fns: {
      sum: atLeast(0),
      min: atLeast(0),
      max: atLeast(0),
      median: atLeast(0),
      count: atLeast(0),
    } satisfies Record<AggFn, Arity>,
  },
  years_since: { props: ["op", "args"], arity: between(1, 2) },
};
