import type { SyntaxNode } from "@lezer/common";
import { parser } from "@prometheus-io/lezer-promql";

/** One series at one instant: its labels (`__name__` among them) and its value. */
export type Sample = { labels: Record<string, string>; value: number };
export type PromqlValue = { kind: "scalar"; value: number } | { kind: "vector"; samples: Sample[] };

/**
 * Evaluates an instant PromQL expression over samples of one instant, with Prometheus' semantics
 * for what alert rules here use: selectors with `=`, `!=`, `=~`, `!~`; arithmetic and comparison
 * between vectors (one-to-one on every label but `__name__`, or `on`/`ignoring`) and with
 * scalars; `bool`; `and`, `or`, `unless`; and `sum`, `max`, `min`, `avg`, `count` by or without
 * labels. Anything else (range vectors, functions, `group_left`) throws, so that a rule using
 * it cannot pass a test unevaluated. Enough to check an alert's threshold logic against sample
 * numbers without a Prometheus server.
 */
export function evaluatePromql(expr: string, samples: Sample[]): PromqlValue {
  const tree = parser.parse(expr);
  const problems: string[] = [];
  tree.iterate({
    enter(ref) {
      if (ref.type.isError) problems.push(`syntax error at ${ref.from}`);
    },
  });
  if (problems.length > 0) throw new Error(`${expr}: ${problems.join("; ")}`);
  const root = tree.topNode.firstChild;
  if (!root) throw new Error("empty expression");
  return evaluate(root, expr, samples);
}

/** The labels of an alert's results: one object per series the expression returns (none: it does not fire). */
export function firing(expr: string, samples: Sample[]): Record<string, string>[] {
  const value = evaluatePromql(expr, samples);
  if (value.kind !== "vector") throw new Error(`${expr} is a scalar, not an alert`);
  return value.samples.map((sample) => sample.labels);
}

const COMPARISONS = new Set(["Gtr", "Lss", "Gte", "Lte", "Eql", "Neq"]);
const ARITHMETIC = new Set(["Add", "Sub", "Mul", "Div"]);
const SETS = new Set(["And", "Or", "Unless"]);

function evaluate(node: SyntaxNode, expr: string, samples: Sample[]): PromqlValue {
  const text = (each: SyntaxNode) => expr.slice(each.from, each.to);
  switch (node.name) {
    case "NumberDurationLiteral":
    case "NumberLiteral":
      return { kind: "scalar", value: Number(text(node)) };
    case "ParenExpr": {
      const inner = node.firstChild;
      if (!inner) throw new Error(`empty parentheses in ${expr}`);
      return evaluate(inner, expr, samples);
    }
    case "VectorSelector":
      return { kind: "vector", samples: select(node, expr, samples) };
    case "AggregateExpr":
      return aggregate(node, expr, samples);
    case "BinaryExpr":
      return binary(node, expr, samples);
    default:
      throw new Error(`${node.name} (${text(node)}) is not supported by this evaluator`);
  }
}

function select(node: SyntaxNode, expr: string, samples: Sample[]): Sample[] {
  const text = (each: SyntaxNode) => expr.slice(each.from, each.to);
  const identifier = node.getChild("Identifier");
  const matchers: ((labels: Record<string, string>) => boolean)[] = [];
  if (identifier) matchers.push((labels) => labels.__name__ === text(identifier));
  const list = node.getChild("LabelMatchers");
  for (let matcher = list?.firstChild ?? null; matcher; matcher = matcher.nextSibling) {
    const label = matcher.getChild("LabelName");
    const op = matcher.getChild("MatchOp");
    const literal = matcher.getChild("StringLiteral");
    if (!label || !op || !literal) continue;
    const name = text(label);
    const wanted = JSON.parse(text(literal)) as string;
    const anchored = new RegExp(`^(?:${wanted})$`);
    const test = {
      "=": (value: string) => value === wanted,
      "!=": (value: string) => value !== wanted,
      "=~": (value: string) => anchored.test(value),
      "!~": (value: string) => !anchored.test(value),
    }[text(op)];
    if (!test) throw new Error(`matcher ${text(op)} is not supported`);
    matchers.push((labels) => test(labels[name] ?? ""));
  }
  return samples.filter((sample) => matchers.every((matches) => matches(sample.labels)));
}

function aggregate(node: SyntaxNode, expr: string, samples: Sample[]): PromqlValue {
  const text = (each: SyntaxNode) => expr.slice(each.from, each.to);
  const op = text(node.getChild("AggregateOp") ?? node);
  const modifier = node.getChild("AggregateModifier");
  const labels = modifier?.getChild("GroupingLabels")?.getChildren("LabelName").map(text) ?? [];
  const without = modifier?.getChild("Without") !== null && modifier !== null;
  const body = node.getChild("FunctionCallBody")?.firstChild;
  if (!body) throw new Error(`${op} without an argument`);
  const inner = evaluate(body, expr, samples);
  if (inner.kind !== "vector") throw new Error(`${op} of a scalar`);
  const groups = new Map<string, { labels: Record<string, string>; values: number[] }>();
  for (const sample of inner.samples) {
    const kept = Object.fromEntries(
      Object.entries(sample.labels).filter(
        ([name]) => name !== "__name__" && (without ? !labels.includes(name) : labels.includes(name)),
      ),
    );
    const key = keyOf(kept);
    const group = groups.get(key) ?? { labels: kept, values: [] };
    group.values.push(sample.value);
    groups.set(key, group);
  }
  const reduce: Record<string, (values: number[]) => number> = {
    sum: (values) => values.reduce((a, b) => a + b, 0),
    max: (values) => Math.max(...values),
    min: (values) => Math.min(...values),
    avg: (values) => values.reduce((a, b) => a + b, 0) / values.length,
    count: (values) => values.length,
  };
  const fn = reduce[op];
  if (!fn) throw new Error(`aggregation ${op} is not supported`);
  return {
    kind: "vector",
    samples: [...groups.values()].map((group) => ({ labels: group.labels, value: fn(group.values) })),
  };
}

function binary(node: SyntaxNode, expr: string, samples: Sample[]): PromqlValue {
  const text = (each: SyntaxNode) => expr.slice(each.from, each.to);
  const children: SyntaxNode[] = [];
  for (let child = node.firstChild; child; child = child.nextSibling) children.push(child);
  const [leftNode, opNode] = children;
  const rightNode = children.at(-1);
  if (!leftNode || !opNode || !rightNode) throw new Error(`malformed ${text(node)}`);
  const op = opNode.name;
  const returnBool = children.some((child) => child.name === "BoolModifier");
  const matching = children.find((child) => child.name === "MatchingModifierClause");
  if (matching?.getChild("GroupLeft") || matching?.getChild("GroupRight")) {
    throw new Error("group_left/group_right are not supported");
  }
  const on = matching?.getChild("On")
    ? (matching.getChild("GroupingLabels")?.getChildren("LabelName").map(text) ?? [])
    : null;
  const ignoring = matching?.getChild("Ignoring")
    ? (matching.getChild("GroupingLabels")?.getChildren("LabelName").map(text) ?? [])
    : [];
  const matchKey = (labels: Record<string, string>) =>
    keyOf(
      Object.fromEntries(
        Object.entries(labels).filter(([name]) =>
          on ? on.includes(name) : name !== "__name__" && !ignoring.includes(name),
        ),
      ),
    );

  const left = evaluate(leftNode, expr, samples);
  const right = evaluate(rightNode, expr, samples);
  const apply = (a: number, b: number): number => {
    switch (op) {
      case "Add":
        return a + b;
      case "Sub":
        return a - b;
      case "Mul":
        return a * b;
      case "Div":
        return a / b;
      case "Gtr":
        return Number(a > b);
      case "Lss":
        return Number(a < b);
      case "Gte":
        return Number(a >= b);
      case "Lte":
        return Number(a <= b);
      case "Eql":
        return Number(a === b);
      case "Neq":
        return Number(a !== b);
      default:
        throw new Error(`operator ${op} is not supported`);
    }
  };
  const withoutName = (labels: Record<string, string>) => {
    const { __name__: _, ...rest } = labels;
    return rest;
  };

  if (SETS.has(op)) {
    if (left.kind !== "vector" || right.kind !== "vector") throw new Error(`${op} needs two vectors`);
    const rightKeys = new Set(right.samples.map((sample) => matchKey(sample.labels)));
    if (op === "And")
      return { kind: "vector", samples: left.samples.filter((s) => rightKeys.has(matchKey(s.labels))) };
    if (op === "Unless") {
      return { kind: "vector", samples: left.samples.filter((s) => !rightKeys.has(matchKey(s.labels))) };
    }
    const leftKeys = new Set(left.samples.map((sample) => matchKey(sample.labels)));
    return {
      kind: "vector",
      samples: [...left.samples, ...right.samples.filter((s) => !leftKeys.has(matchKey(s.labels)))],
    };
  }
  if (!COMPARISONS.has(op) && !ARITHMETIC.has(op)) throw new Error(`operator ${op} is not supported`);
  const comparison = COMPARISONS.has(op);

  if (left.kind === "scalar" && right.kind === "scalar") {
    return { kind: "scalar", value: apply(left.value, right.value) };
  }
  // A comparison without `bool` filters, keeping the vector's value; with `bool` (and
  // arithmetic) it yields the result and drops the metric name.
  const combine = (sample: Sample, a: number, b: number): Sample | null => {
    const result = apply(a, b);
    if (comparison && !returnBool) return result ? sample : null;
    return { labels: withoutName(sample.labels), value: result };
  };
  if (left.kind === "vector" && right.kind === "scalar") {
    return {
      kind: "vector",
      samples: left.samples.flatMap((s) => combine(s, s.value, right.value) ?? []),
    };
  }
  if (left.kind === "scalar" && right.kind === "vector") {
    return {
      kind: "vector",
      samples: right.samples.flatMap((s) => {
        const result = apply(left.value, s.value);
        if (comparison && !returnBool) return result ? [s] : [];
        return [{ labels: withoutName(s.labels), value: result }];
      }),
    };
  }
  if (left.kind !== "vector" || right.kind !== "vector") throw new Error("unreachable");
  const byKey = new Map<string, Sample>();
  for (const sample of right.samples) {
    const key = matchKey(sample.labels);
    if (byKey.has(key)) throw new Error(`many-to-one match on ${key}: not supported`);
    byKey.set(key, sample);
  }
  const out: Sample[] = [];
  for (const sample of left.samples) {
    const other = byKey.get(matchKey(sample.labels));
    if (!other) continue;
    const result = combine(sample, sample.value, other.value);
    if (!result) continue;
    // Arithmetic between vectors keeps the matching labels only when `on` names them.
    out.push(on && !comparison ? { labels: pick(result.labels, on), value: result.value } : result);
  }
  return { kind: "vector", samples: out };
}

function pick(labels: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([name]) => names.includes(name)));
}

function keyOf(labels: Record<string, string>): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
