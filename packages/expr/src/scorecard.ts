import { compileValidated } from "./compile.js";
import type { CompiledExpression } from "./compiled.js";
import { ExpressionInvalidError } from "./errors.js";
import { newContext, runExpression } from "./evaluate.js";
import { isPlainObject } from "./json.js";
import { appendPointer } from "./json-pointer.js";
import { MAX_AXES, MAX_SCORECARD_NODES } from "./limits.js";
import type { ExpressionNode } from "./nodes.js";
import type { Scope } from "./ops/var.js";
import type { EvaluateOptions, TraceStep } from "./trace.js";
import { utf8Bytes } from "./tracer.js";
import { collectExpressionProblems, type ExpressionProblem } from "./validate.js";

/** A score range of an axis: a score is in the band when `min <= score < max`. */
export type Band = { id: string; label: string; min: number; max: number };

/** One axis of a scorecard after validation: its expression compiled, its bands as given. */
export type CompiledAxis = { id: string; label: string; expr: CompiledExpression; bands: Band[] };

/** One axis of a preview report (docs/expressions.md): band fields are null when the score is or none matches. */
export type AxisResult = {
  axis: string;
  label: string;
  score: number | null;
  band_id: string | null;
  band_label: string | null;
};

/**
 * The trace of a scorecard's evaluation (docs/expressions.md#the-trace): each axis's steps keyed by
 * axis id; `truncated: true` and `omitted_steps` only when the trace reached its budget.
 */
export type ScorecardTrace = {
  axes: Record<string, TraceStep[]>;
  truncated?: true;
  omitted_steps?: number;
};

/** A preview report's axes and the trace of each axis's expression, keyed by axis id. */
export type ScorecardResult = { axes: AxisResult[]; trace: ScorecardTrace };

/**
 * Marks scorecards that went through `compileScorecard`, so they are not validated again. Holds the
 * scorecard limits itself (`MAX_AXES`, `MAX_SCORECARD_NODES`): one built otherwise from compiled
 * expressions is refused with `ExpressionInvalidError`, so no evaluation runs past them.
 */
export class CompiledScorecard {
  readonly axes: readonly CompiledAxis[];
  constructor(axes: readonly CompiledAxis[]) {
    const problem = scorecardLimitProblem(axes);
    if (problem !== undefined) throw new ExpressionInvalidError([problem]);
    this.axes = axes;
  }
}

/** The first scorecard limit `axes` pass, with the path of the axis where the node total passed it. */
function scorecardLimitProblem(axes: readonly CompiledAxis[]): ExpressionProblem | undefined {
  if (axes.length > MAX_AXES) return { path: "/axes", reason: tooManyAxes };
  let nodes = 0;
  for (const [i, axis] of axes.entries()) {
    nodes += axis.expr.nodeCount;
    if (nodes > MAX_SCORECARD_NODES) return { path: appendPointer("/axes", i, "expr"), reason: tooManyNodes };
  }
  return undefined;
}

const tooManyAxes = `scorecard has more than ${MAX_AXES} axes`;
const tooManyNodes = `scorecard has more than ${MAX_SCORECARD_NODES} nodes across its axes`;

/**
 * Every problem of scorecard content, paths from the content's root (`/axes/0/expr/args/1`): the shape
 * of the content, axes and bands, and each axis's expression with its own limits. Shape problems
 * point at the offending value, or at its object when a property is missing; expression problems point
 * at the node. Properties not named in docs/expressions.md are allowed on the content, axes and
 * bands (its component contents keep fields they do not name), never on nodes. Empty `axes` and empty `bands` are allowed.
 */
export function validateScorecard(content: unknown): ExpressionProblem[] {
  const out: ExpressionProblem[] = [];
  if (!isPlainObject(content)) {
    out.push({ path: "", reason: "scorecard content must be an object" });
    return out;
  }
  if (!Object.hasOwn(content, "kind")) out.push({ path: "", reason: 'property "kind" is required' });
  else if (content.kind !== "scorecard") out.push({ path: "/kind", reason: 'kind must be "scorecard"' });
  if (!Object.hasOwn(content, "axes")) {
    out.push({ path: "", reason: 'property "axes" is required' });
    return out;
  }
  if (!Array.isArray(content.axes)) {
    out.push({ path: "/axes", reason: "axes must be an array" });
    return out;
  }
  if (content.axes.length > MAX_AXES) out.push({ path: "/axes", reason: tooManyAxes });
  const axisIds = new Set<string>();
  const count = { nodes: 0, reported: false };
  for (const [i, axis] of content.axes.entries()) {
    checkAxis(axis, appendPointer("/axes", i), axisIds, count, out);
  }
  return out;
}

/**
 * Validates and compiles scorecard content once, for many evaluations. Throws `ExpressionInvalidError`
 * whose `path`s are from the content's root (what preview answers as `expression_invalid`).
 */
export function compileScorecard(content: unknown): CompiledScorecard {
  const problems = validateScorecard(content);
  if (problems.length > 0) throw new ExpressionInvalidError(problems);
  const axes = (
    content as { axes: Array<{ id: string; label: string; expr: ExpressionNode; bands: Band[] }> }
  ).axes;
  return new CompiledScorecard(
    axes.map((axis) => ({
      id: axis.id,
      label: axis.label,
      expr: compileValidated(axis.expr),
      bands: axis.bands.map(({ id, label, min, max }) => ({ id, label, min, max })),
    })),
  );
}

/**
 * Scores every axis (docs/expressions.md#preview): the score is the expression's value when it is a number,
 * else null; the band is the first, in the order given, with `min <= score < max`. Takes raw content
 * (compiled here, throwing `ExpressionInvalidError` if malformed) or a `CompiledScorecard`.
 */
export function evaluateScorecard(
  content: unknown,
  scope: Scope,
  options: EvaluateOptions = {},
): ScorecardResult {
  const scorecard = content instanceof CompiledScorecard ? content : compileScorecard(content);
  // One clock reading, one trace budget and one comparison work limit for all axes. The budget
  // holds the whole serialized trace: the axes' keys and brackets and the truncation marker too.
  let wrapper = '{"axes":{},"truncated":true,"omitted_steps":'.length + 10;
  for (const axis of scorecard.axes) wrapper += utf8Bytes(JSON.stringify(axis.id)) + 4;
  const ctx = newContext(scope, options.now ?? new Date(), wrapper);
  const axes: AxisResult[] = [];
  const traces: Array<[string, TraceStep[]]> = [];
  for (const axis of scorecard.axes) {
    const trace: TraceStep[] = [];
    ctx.trace = trace;
    const value = runExpression(axis.expr, ctx);
    const score = typeof value === "number" ? value : null;
    const band = score === null ? undefined : axis.bands.find((b) => b.min <= score && score < b.max);
    axes.push({
      axis: axis.id,
      label: axis.label,
      score,
      band_id: band?.id ?? null,
      band_label: band?.label ?? null,
    });
    traces.push([axis.id, trace]);
  }
  // fromEntries defines own properties, so an axis id such as "__proto__" is an ordinary key.
  const trace: ScorecardTrace = { axes: Object.fromEntries(traces) };
  if (ctx.tracer.truncated) {
    trace.truncated = true;
    trace.omitted_steps = ctx.tracer.omitted;
  }
  return { axes, trace };
}

function checkAxis(
  axis: unknown,
  path: string,
  axisIds: Set<string>,
  count: { nodes: number; reported: boolean },
  out: ExpressionProblem[],
): void {
  if (!isPlainObject(axis)) {
    out.push({ path, reason: "axis must be an object" });
    return;
  }
  checkId(axis, path, "axis", axisIds, out);
  checkLabel(axis, path, out);
  if (!Object.hasOwn(axis, "expr")) out.push({ path, reason: 'property "expr" is required' });
  else {
    const exprPath = appendPointer(path, "expr");
    count.nodes += collectExpressionProblems(axis.expr, exprPath, {}, out);
    // Reported once, at the axis whose expression passes the total.
    if (count.nodes > MAX_SCORECARD_NODES && !count.reported) {
      out.push({ path: exprPath, reason: tooManyNodes });
      count.reported = true;
    }
  }
  if (!Object.hasOwn(axis, "bands")) {
    out.push({ path, reason: 'property "bands" is required' });
    return;
  }
  const bandsPath = appendPointer(path, "bands");
  if (!Array.isArray(axis.bands)) {
    out.push({ path: bandsPath, reason: "bands must be an array" });
    return;
  }
  const bandIds = new Set<string>();
  for (const [j, band] of axis.bands.entries()) checkBand(band, appendPointer(bandsPath, j), bandIds, out);
}

function checkId(
  owner: Record<string, unknown>,
  path: string,
  what: "axis" | "band",
  seen: Set<string>,
  out: ExpressionProblem[],
): void {
  if (!Object.hasOwn(owner, "id")) {
    out.push({ path, reason: 'property "id" is required' });
    return;
  }
  const id = owner.id;
  if (typeof id !== "string" || id === "") {
    out.push({ path: appendPointer(path, "id"), reason: `${what} id must be a non-empty string` });
  } else if (seen.has(id)) {
    out.push({ path: appendPointer(path, "id"), reason: `duplicate ${what} id ${JSON.stringify(id)}` });
  } else {
    seen.add(id);
  }
}

function checkLabel(owner: Record<string, unknown>, path: string, out: ExpressionProblem[]): void {
  if (!Object.hasOwn(owner, "label")) out.push({ path, reason: 'property "label" is required' });
  else if (typeof owner.label !== "string") {
    out.push({ path: appendPointer(path, "label"), reason: "label must be a string" });
  }
}

function checkBand(band: unknown, path: string, seen: Set<string>, out: ExpressionProblem[]): void {
  if (!isPlainObject(band)) {
    out.push({ path, reason: "band must be an object" });
    return;
  }
  checkId(band, path, "band", seen, out);
  checkLabel(band, path, out);
  let bounds = true;
  for (const key of ["min", "max"] as const) {
    if (!Object.hasOwn(band, key)) {
      out.push({ path, reason: `property "${key}" is required` });
      bounds = false;
    } else if (typeof band[key] !== "number" || !Number.isFinite(band[key])) {
      out.push({ path: appendPointer(path, key), reason: `band ${key} must be a number` });
      bounds = false;
    }
  }
  if (bounds && (band.min as number) >= (band.max as number)) {
    out.push({ path, reason: "band min must be less than max" });
  }
}
