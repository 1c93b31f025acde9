import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expr } from "./builders.js";
import { compileExpression } from "./compile.js";
import { evaluate } from "./evaluate.js";
import { isJsonValue, type JsonValue } from "./json.js";
import { appendPointer, resolvePointer } from "./json-pointer.js";
import { AGG_FNS, type AggFn, BOOL_FNS, CALC_FNS, CMP_FNS, type ExpressionNode, OP_SPECS } from "./nodes.js";
import { compareCodePoints } from "./ops/cmp.js";
import type { Scope } from "./ops/var.js";
import { validateExpression } from "./validate.js";

const NOW = new Date("2025-06-15T12:00:00Z");
/**
 * Random seeds by default, so each run explores new trees; `FC_SEED` replays a reported
 * counterexample, and CI runs with a fixed seed so that a submission's result is reproducible.
 */
const SEED = process.env.FC_SEED ? Number(process.env.FC_SEED) : process.env.CI ? 20_261_126 : undefined;
if (SEED !== undefined) fc.configureGlobal({ seed: SEED });
const RUNS = { numRuns: 300 };

// ---- generators -------------------------------------------------------------------------------

const dateText = fc.constantFrom(
  "2000-02-29",
  "1990-12-31",
  "2021-02-30",
  "2030-01-01T10:00:00+02:00",
  "nope",
);
const scalar = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -5, max: 5 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom("a", "b", "1", ""),
  dateText,
);
const json: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 4, arbitrary: scalar },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue> },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 4 }) },
);
const varPath = fc.constantFrom(
  "answers",
  "answers.q1",
  "answers.q1.value",
  "answers.q2.option_ids",
  "answers.q2.option_ids.0",
  "answers.missing.x",
  "context.as_of",
  "context.flag",
  "signals.pace",
);

/** Argument lists of a random length the arity allows (at most 3 beyond its minimum). */
function argsFor(min: number, max: number, node: fc.Arbitrary<ExpressionNode>) {
  return fc.array(node, { minLength: min, maxLength: Math.min(max, min + 3) });
}

function arity(op: keyof typeof OP_SPECS, fn?: string) {
  const spec = OP_SPECS[op];
  const a = fn === undefined ? spec.arity : spec.fns?.[fn];
  if (a === undefined) throw new Error(`no arity for ${op} ${fn}`);
  return a;
}

/** Every valid tree shape, up to depth 6 (the first alternative is the leaf `oneof` falls back on). */
const { tree } = fc.letrec<{ tree: ExpressionNode }>((tie) => {
  const node = tie("tree");
  const leaf = fc.oneof(json.map(expr.lit), varPath.map(expr.var));
  const withFn = <F extends string>(op: "calc" | "cmp" | "bool" | "agg", fns: readonly F[]) =>
    fc.constantFrom(...fns).chain((fn) => {
      const { min, max } = arity(op, fn);
      return argsFor(min, max, node).map((args) => ({ op, fn, args }) as ExpressionNode);
    });
  return {
    tree: fc.oneof(
      { maxDepth: 6, depthSize: "small" },
      leaf,
      withFn("calc", CALC_FNS),
      withFn("cmp", CMP_FNS),
      withFn("bool", BOOL_FNS),
      withFn("agg", AGG_FNS),
      fc.tuple(node, node, node).map(([c, t, e]) => expr.if(c, t, e)),
      fc.tuple(node, node).map(([n, h]) => expr.in(n, h)),
      argsFor(1, 2, node).map((args) => ({ op: "years_since", args }) as ExpressionNode),
    ),
  };
});

const scope: fc.Arbitrary<Scope> = fc.record(
  {
    answers: fc.oneof(
      fc.record(
        {
          q1: fc.oneof(json, fc.record({ value: json })),
          q2: fc.record({ option_ids: fc.array(json, { maxLength: 3 }) }),
        },
        { requiredKeys: [] },
      ),
      json,
    ),
    context: fc.record({ as_of: fc.oneof(dateText, json), flag: json }, { requiredKeys: [] }),
    signals: fc.dictionary(fc.constantFrom("pace", "other"), json),
  },
  { requiredKeys: [] },
);

const kleene = fc.constantFrom<boolean | null>(true, false, null);

// ---- helpers ----------------------------------------------------------------------------------

const run = (node: ExpressionNode, s: Scope = {}) => evaluate(compileExpression(node), s, { now: NOW });

/** The root's outcome, a type error included, for comparing two evaluations. */
function outcome(node: ExpressionNode, s: Scope = {}): JsonValue | "type_error" {
  const { value, trace } = run(node, s);
  return trace.at(-1)?.error ?? value;
}

function countNodes(node: ExpressionNode): number {
  return 1 + ("args" in node ? node.args.reduce((sum, arg) => sum + countNodes(arg), 0) : 0);
}

function allPaths(node: ExpressionNode, path = ""): string[] {
  const own = [path];
  if ("args" in node) {
    for (const [i, arg] of node.args.entries()) own.push(...allPaths(arg, appendPointer(path, "args", i)));
  }
  return own;
}

// ---- properties -------------------------------------------------------------------------------

describe("properties", () => {
  it("De Morgan holds under Kleene logic, both ways", () => {
    fc.assert(
      fc.property(kleene, kleene, (a, b) => {
        const [la, lb] = [expr.lit(a), expr.lit(b)];
        expect(outcome(expr.bool("not", expr.bool("and", la, lb)))).toBe(
          outcome(expr.bool("or", expr.bool("not", la), expr.bool("not", lb))),
        );
        expect(outcome(expr.bool("not", expr.bool("or", la, lb)))).toBe(
          outcome(expr.bool("and", expr.bool("not", la), expr.bool("not", lb))),
        );
      }),
    );
  });

  it("agg ignores nulls: adding nulls anywhere never changes the result", () => {
    const arg = fc.oneof({ weight: 5, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }, json);
    fc.assert(
      fc.property(
        fc.constantFrom<AggFn>(...AGG_FNS),
        fc.array(arg, { maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        (fn, values, nullAt) => {
          const withNulls: JsonValue[] = [...values];
          for (const at of nullAt) withNulls.splice(at % (withNulls.length + 1), 0, null);
          expect(outcome(expr.agg(fn, ...withNulls.map(expr.lit)))).toEqual(
            outcome(expr.agg(fn, ...values.map(expr.lit))),
          );
        },
      ),
      RUNS,
    );
  });

  it("count is never null and equals the number of non-null args", () => {
    fc.assert(
      fc.property(fc.array(json, { maxLength: 8 }), (values) => {
        const { value, trace } = run(expr.agg("count", ...values.map(expr.lit)));
        expect(value).toBe(values.filter((v) => v !== null).length);
        expect(trace.at(-1)?.error).toBeUndefined();
      }),
      RUNS,
    );
  });

  it("evaluation is total: any valid tree, any scope, never throws and gives JSON", () => {
    fc.assert(
      fc.property(tree, scope, (node, s) => {
        const { value, trace } = run(node, s);
        expect(isJsonValue(value)).toBe(true);
        // JSON has no -0 (nor any other distinction a client could see): compared as JSON text.
        const text = JSON.stringify(value);
        expect(JSON.stringify(JSON.parse(text))).toBe(text);
        for (const step of trace) {
          expect(isJsonValue(step.value)).toBe(true);
          if (step.error !== undefined) expect(step.value).toBeNull();
        }
      }),
      RUNS,
    );
  });

  it("validateExpression accepts every generated tree, and compile of its JSON round trip agrees", () => {
    fc.assert(
      fc.property(tree, scope, (node, s) => {
        expect(validateExpression(node)).toEqual([]);
        const copy = JSON.parse(JSON.stringify(node)) as ExpressionNode;
        const compiled = compileExpression(copy);
        expect(compiled.nodeCount).toBe(countNodes(node));
        // JSON has no -0: the round trip turns a literal -0 into 0, so the results agree as JSON.
        const asJson = (result: unknown) => JSON.parse(JSON.stringify(result)) as unknown;
        expect(asJson(evaluate(compiled, s, { now: NOW }))).toEqual(asJson(run(node, s)));
      }),
      RUNS,
    );
  });

  it("the trace has one step per evaluated node, children first, matching the tree", () => {
    fc.assert(
      fc.property(tree, scope, (node, s) => {
        const { value, trace } = run(node, s);
        const at = new Map(trace.map((step, i) => [step.path, i]));
        expect(at.size).toBe(trace.length);
        expect(trace.at(-1)).toMatchObject({ path: "", value });
        for (const [i, step] of trace.entries()) {
          const source = resolvePointer(node, step.path) as ExpressionNode;
          expect(step.op).toBe(source.op);
          expect(step.fn).toBe("fn" in source ? source.fn : undefined);
          if (!("args" in source)) continue;
          const children = source.args.map((_, k) => at.get(appendPointer(step.path, "args", k)));
          let evaluated = children;
          if (source.op === "if") {
            const cond = trace[children[0] as number];
            const branch = step.error ? [] : [cond?.value === true ? children[1] : children[2]];
            evaluated = [children[0], ...branch];
            const skipped = children.filter((c) => !evaluated.includes(c));
            expect(skipped.every((c) => c === undefined)).toBe(true);
          }
          // Every evaluated child ran before its parent, left to right.
          expect(evaluated.every((c) => c !== undefined && c < i)).toBe(true);
          expect([...evaluated].sort((x, y) => (x as number) - (y as number))).toEqual(evaluated);
        }
        const hasIf = allPaths(node).some((p) => (resolvePointer(node, p) as ExpressionNode).op === "if");
        if (!hasIf) expect(trace).toHaveLength(countNodes(node));
      }),
      RUNS,
    );
  });

  it("cmp eq is symmetric, reflexive on non-null values, and ne is its negation", () => {
    fc.assert(
      fc.property(json, json, (a, b) => {
        const eq = outcome(expr.cmp("eq", expr.lit(a), expr.lit(b)));
        expect(outcome(expr.cmp("eq", expr.lit(b), expr.lit(a)))).toBe(eq);
        const ne = outcome(expr.cmp("ne", expr.lit(a), expr.lit(b)));
        expect(ne).toBe(eq === null ? null : !eq);
        if (a !== null) expect(outcome(expr.cmp("eq", expr.lit(a), expr.lit(structuredClone(a))))).toBe(true);
      }),
      RUNS,
    );
  });

  it("orders strings exactly as their code point sequences", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), (a, b) => {
        const points = (s: string) => Array.from(s, (c) => c.codePointAt(0) as number);
        const [pa, pb] = [points(a), points(b)];
        let expected = 0;
        for (let i = 0; i < Math.min(pa.length, pb.length) && expected === 0; i++) {
          expected = Math.sign((pa[i] as number) - (pb[i] as number));
        }
        if (expected === 0) expected = Math.sign(pa.length - pb.length);
        expect(Math.sign(compareCodePoints(a, b))).toBe(expected);
        expect(outcome(expr.cmp("lt", expr.lit(a), expr.lit(b)))).toBe(expected < 0);
      }),
      RUNS,
    );
    // Generating grapheme strings is slow on a loaded machine; the property itself is fast.
  }, 30_000);

  it("round stays within half a unit of its input, and is null only where nothing else is", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }), (x) => {
        const r = outcome(expr.calc("round", expr.lit(x))) as number;
        expect(Number.isInteger(r)).toBe(true);
        expect(Math.abs(r - x)).toBeLessThanOrEqual(0.5);
      }),
      RUNS,
    );
  });

  it("an extra property on any node is reported at exactly that node's path", () => {
    fc.assert(
      fc.property(tree, fc.nat(), (node, pick) => {
        const copy = JSON.parse(JSON.stringify(node)) as ExpressionNode;
        const paths = allPaths(copy);
        const path = paths[pick % paths.length] as string;
        (resolvePointer(copy, path) as Record<string, unknown>).extra = 1;
        expect(validateExpression(copy)).toEqual([{ path, reason: 'property "extra" is not allowed' }]);
      }),
      RUNS,
    );
  });
});
