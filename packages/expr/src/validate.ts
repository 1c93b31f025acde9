import { isJsonValue, isPlainObject } from "./json.js";
import { type Arity, MAX_DEPTH, MAX_NODES, OP_SPECS, VAR_ROOTS } from "./nodes.js";

/**
 * One thing wrong with an expression or a scorecard. `path` is a JSON pointer to the offending node
 * (or scorecard field); the API hands these out as `bundle_invalid` `context.errors` and as
 * `expression_invalid` `context.path`/`context.reason`.
 */
export type ExpressionProblem = { path: string; reason: string };

/** Overrides of the contract's limits, for callers that need tighter ones (and for tests). */
export type ValidateOptions = { maxDepth?: number; maxNodes?: number };

/**
 * Every problem of an expression tree, in document order (a node's own problems, then its args'), with
 * paths relative to `node` (`""` is `node` itself). An empty list means the tree can be compiled.
 *
 * The walk is iterative and bounded: nothing deeper than `maxDepth` (default 64) is looked at, and the
 * first node beyond it is reported once ("expression is deeper than 64 levels", at that node's path);
 * the walk stops at the first node beyond `maxNodes` (default 10,000, counted in document order) and
 * reports it there. Problems found before a limit are kept.
 */
export function validateExpression(node: unknown, options: ValidateOptions = {}): ExpressionProblem[] {
  const problems: ExpressionProblem[] = [];
  collectExpressionProblems(node, "", options, problems);
  return problems;
}

/**
 * `validateExpression` with paths prefixed by `basePath`, appended to `out` (used by scorecards).
 * Returns how many nodes it counted (at most `maxNodes + 1`).
 */
export function collectExpressionProblems(
  root: unknown,
  basePath: string,
  options: ValidateOptions,
  out: ExpressionProblem[],
): number {
  const maxDepth = options.maxDepth ?? MAX_DEPTH;
  const maxNodes = options.maxNodes ?? MAX_NODES;
  const stack: Array<{ node: unknown; path: string; depth: number }> = [
    { node: root, path: basePath, depth: 1 },
  ];
  let count = 0;
  let depthReported = false;
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop() as { node: unknown; path: string; depth: number };
    if (depth > maxDepth) {
      if (!depthReported) out.push({ path, reason: `expression is deeper than ${maxDepth} levels` });
      depthReported = true;
      continue;
    }
    count += 1;
    if (count > maxNodes) {
      out.push({ path, reason: `expression has more than ${maxNodes} nodes` });
      return count;
    }
    const args = checkNode(node, path, out);
    // Children are pushed in reverse so they pop in order. No more are pushed than can still be
    // counted: the node limit then trips among them, whatever size an `args` array has.
    const take =
      depth + 1 > maxDepth ? Math.min(args.length, 1) : Math.min(args.length, maxNodes - count + 1);
    for (let i = take - 1; i >= 0; i--) {
      // `/args/<i>` needs no escaping, so the pointer is appended as is (this runs once per node).
      stack.push({ node: args[i], path: `${path}/args/${i}`, depth: depth + 1 });
    }
  }
  return count;
}

/** Checks one node's own shape and returns the args to descend into (none when it cannot tell). */
function checkNode(node: unknown, path: string, out: ExpressionProblem[]): readonly unknown[] {
  if (!isPlainObject(node)) {
    out.push({ path, reason: "node must be an object" });
    return [];
  }
  if (!Object.hasOwn(node, "op")) {
    out.push({ path, reason: 'property "op" is required' });
    return [];
  }
  const op = node.op;
  if (typeof op !== "string") {
    out.push({ path, reason: 'property "op" must be a string' });
    return [];
  }
  if (!Object.hasOwn(OP_SPECS, op)) {
    out.push({ path, reason: `unknown op ${JSON.stringify(op)}` });
    return [];
  }
  const spec = OP_SPECS[op as keyof typeof OP_SPECS];
  for (const key of Object.keys(node)) {
    if (!spec.props.includes(key))
      out.push({ path, reason: `property ${JSON.stringify(key)} is not allowed` });
  }
  for (const key of spec.props) {
    if (!Object.hasOwn(node, key)) out.push({ path, reason: `property ${JSON.stringify(key)} is required` });
  }

  if (op === "lit") {
    if (Object.hasOwn(node, "value") && !isJsonValue(node.value)) {
      out.push({ path, reason: "lit value must be JSON" });
    }
    return [];
  }
  if (op === "var") {
    if (Object.hasOwn(node, "path")) {
      const reason = varPathProblem(node.path);
      if (reason !== undefined) out.push({ path, reason });
    }
    return [];
  }

  let arity = spec.arity;
  let label = op;
  if (spec.fns !== undefined && Object.hasOwn(node, "fn")) {
    const fn = node.fn;
    if (typeof fn !== "string") {
      out.push({ path, reason: 'property "fn" must be a string' });
    } else if (!Object.hasOwn(spec.fns, fn)) {
      out.push({ path, reason: `unknown ${op} fn ${JSON.stringify(fn)}` });
    } else {
      arity = spec.fns[fn];
      label = `${op} ${fn}`;
    }
  }
  if (!Object.hasOwn(node, "args")) return [];
  const args = node.args;
  if (!Array.isArray(args)) {
    out.push({ path, reason: 'property "args" must be an array' });
    return [];
  }
  if (arity !== undefined && (args.length < arity.min || args.length > arity.max)) {
    out.push({ path, reason: `${label} takes ${describeArity(arity)}, got ${args.length}` });
  }
  return args;
}

/** A path of non-empty dot-separated segments whose first is a `VAR_ROOTS` entry. */
const WELL_FORMED_VAR_PATH = new RegExp(`^(?:${VAR_ROOTS.join("|")})(?:\\.[^.]+)*$`);

/** Why a `var` path is malformed, or undefined when it is fine. */
function varPathProblem(path: unknown): string | undefined {
  if (typeof path === "string" && WELL_FORMED_VAR_PATH.test(path)) return undefined;
  if (typeof path !== "string" || path === "") return "var path must be a non-empty string";
  const segments = path.split(".");
  if (segments.some((segment) => segment === "")) {
    return `var path ${JSON.stringify(path)} has an empty segment`;
  }
  return `var path ${JSON.stringify(path)} must start with "answers", "context" or "signals"`;
}

function describeArity({ min, max }: Arity): string {
  const unit = (n: number) => (n === 1 ? "arg" : "args");
  if (min === max) return `exactly ${min} ${unit(min)}`;
  if (max === Number.POSITIVE_INFINITY) return `at least ${min} ${unit(min)}`;
  return `${min} or ${max} args`;
}
