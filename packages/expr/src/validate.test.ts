import { describe, expect, it } from "vitest";
import { expr } from "./builders.js";
import { MAX_DEPTH, MAX_NODES } from "./nodes.js";
import { validateExpression } from "./validate.js";

const one = (path: string, reason: string) => [{ path, reason }];

/** `not(not(… lit …))` with `depth` nodes on the chain, built without recursion. */
function chain(depth: number): unknown {
  let node: unknown = { op: "lit", value: true };
  for (let i = 1; i < depth; i++) node = { op: "bool", fn: "not", args: [node] };
  return node;
}

/** The pointer of the node at `level` (1 = root) of a `chain`. */
const chainPath = (level: number) => "/args/0".repeat(level - 1);

describe("validateExpression accepts", () => {
  it("every op in every shape the contract allows", () => {
    const valid = [
      expr.lit(null),
      expr.lit({ any: ["json", 1, true, null] }),
      expr.var("answers"),
      expr.var("answers.q1.value"),
      expr.var("context.as_of"),
      expr.var("signals.x.0.y z"),
      expr.calc("add", expr.lit(1)),
      expr.calc("mul", expr.lit(1), expr.lit(2), expr.lit(3)),
      expr.calc("round", expr.lit(1)),
      expr.calc("round", expr.lit(1), expr.lit(2)),
      expr.cmp("gte", expr.lit(1), expr.lit(2)),
      expr.bool("not", expr.lit(true)),
      expr.bool("or", expr.lit(true), expr.lit(false), expr.lit(null)),
      expr.if(expr.lit(true), expr.lit(1), expr.lit(2)),
      expr.in(expr.lit(1), expr.lit([1])),
      expr.agg("count"),
      expr.agg("median", expr.lit(1), expr.lit(2)),
      expr.yearsSince(expr.lit("2000-01-01")),
      expr.yearsSince(expr.lit("2000-01-01"), expr.var("context.as_of")),
      JSON.parse('{"op":"lit","value":{"__proto__":{"x":1}}}'),
      Object.assign(Object.create(null), { op: "lit", value: 1 }),
    ];
    for (const node of valid) expect(validateExpression(node)).toEqual([]);
  });

  it("every arity the contract allows, and rejects the others", () => {
    const arities: Array<[string, string | undefined, number[], number[]]> = [
      ["calc", "add", [1, 2, 5], [0]],
      ["calc", "mul", [1, 3], [0]],
      ["calc", "sub", [2], [0, 1, 3]],
      ["calc", "div", [2], [1, 3]],
      ["calc", "mod", [2], [1, 3]],
      ["calc", "pow", [2], [1, 3]],
      ["calc", "neg", [1], [0, 2]],
      ["calc", "abs", [1], [0, 2]],
      ["calc", "floor", [1], [0, 2]],
      ["calc", "ceil", [1], [0, 2]],
      ["calc", "round", [1, 2], [0, 3]],
      ["cmp", "eq", [2], [0, 1, 3]],
      ["cmp", "ne", [2], [1, 3]],
      ["cmp", "lt", [2], [1, 3]],
      ["cmp", "lte", [2], [1, 3]],
      ["cmp", "gt", [2], [1, 3]],
      ["cmp", "gte", [2], [1, 3]],
      ["bool", "and", [1, 2, 4], [0]],
      ["bool", "or", [1, 3], [0]],
      ["bool", "not", [1], [0, 2]],
      ["agg", "sum", [0, 1, 7], []],
      ["agg", "min", [0, 2], []],
      ["agg", "max", [0, 2], []],
      ["agg", "median", [0, 2], []],
      ["agg", "count", [0, 3], []],
      ["if", undefined, [3], [0, 2, 4]],
      ["in", undefined, [2], [0, 1, 3]],
      ["years_since", undefined, [1, 2], [0, 3]],
    ];
    for (const [op, fn, good, bad] of arities) {
      const make = (n: number) => ({
        op,
        ...(fn === undefined ? {} : { fn }),
        args: Array.from({ length: n }, () => ({ op: "lit", value: 1 })),
      });
      for (const n of good) expect(validateExpression(make(n)), `${op} ${fn} ${n}`).toEqual([]);
      for (const n of bad) {
        const problems = validateExpression(make(n));
        expect(problems, `${op} ${fn} ${n}`).toHaveLength(1);
        expect(problems[0]?.path).toBe("");
        expect(problems[0]?.reason).toMatch(
          new RegExp(`^${fn === undefined ? op : `${op} ${fn}`} takes .*, got ${n}$`),
        );
      }
    }
  });
});

describe("validateExpression reports", () => {
  it("arity problems as short sentences", () => {
    const lit = expr.lit(1);
    expect(validateExpression({ op: "calc", fn: "sub", args: [lit, lit, lit] })).toEqual(
      one("", "calc sub takes exactly 2 args, got 3"),
    );
    expect(validateExpression({ op: "calc", fn: "add", args: [] })).toEqual(
      one("", "calc add takes at least 1 arg, got 0"),
    );
    expect(validateExpression({ op: "calc", fn: "neg", args: [] })).toEqual(
      one("", "calc neg takes exactly 1 arg, got 0"),
    );
    expect(validateExpression({ op: "calc", fn: "round", args: [lit, lit, lit] })).toEqual(
      one("", "calc round takes 1 or 2 args, got 3"),
    );
    expect(validateExpression({ op: "if", args: [lit] })).toEqual(one("", "if takes exactly 3 args, got 1"));
    expect(validateExpression({ op: "years_since", args: [] })).toEqual(
      one("", "years_since takes 1 or 2 args, got 0"),
    );
  });

  it("a node that is not an object", () => {
    for (const node of [null, undefined, 1, "lit", true, [], [{ op: "lit", value: 1 }], new Date()]) {
      expect(validateExpression(node)).toEqual(one("", "node must be an object"));
    }
  });

  it("a missing, non-string or unknown op, and nothing else about that node", () => {
    expect(validateExpression({ value: 1 })).toEqual(one("", 'property "op" is required'));
    expect(validateExpression({ op: 1, args: [] })).toEqual(one("", 'property "op" must be a string'));
    expect(validateExpression({ op: "foo", x: 1 })).toEqual(one("", 'unknown op "foo"'));
    expect(validateExpression({ op: "LIT", value: 1 })).toEqual(one("", 'unknown op "LIT"'));
    expect(validateExpression({ op: "toString" })).toEqual(one("", 'unknown op "toString"'));
    expect(validateExpression({ op: "__proto__" })).toEqual(one("", 'unknown op "__proto__"'));
  });

  it("properties the op does not allow, and missing ones", () => {
    expect(validateExpression({ op: "lit", value: 1, x: 2 })).toEqual(one("", 'property "x" is not allowed'));
    expect(validateExpression({ op: "lit", value: 1, fn: "add" })).toEqual(
      one("", 'property "fn" is not allowed'),
    );
    expect(validateExpression({ op: "var", path: "answers.a", args: [] })).toEqual(
      one("", 'property "args" is not allowed'),
    );
    expect(
      validateExpression({ op: "if", fn: "and", args: [expr.lit(1), expr.lit(1), expr.lit(1)] }),
    ).toEqual(one("", 'property "fn" is not allowed'));
    expect(validateExpression({ op: "lit" })).toEqual(one("", 'property "value" is required'));
    expect(validateExpression({ op: "var" })).toEqual(one("", 'property "path" is required'));
    expect(validateExpression({ op: "calc", args: [expr.lit(1)] })).toEqual(
      one("", 'property "fn" is required'),
    );
    expect(validateExpression({ op: "agg", fn: "sum" })).toEqual(one("", 'property "args" is required'));
    expect(validateExpression({ op: "in" })).toEqual(one("", 'property "args" is required'));
    expect(validateExpression({ op: "bool", a: 1, b: 2 })).toEqual([
      { path: "", reason: 'property "a" is not allowed' },
      { path: "", reason: 'property "b" is not allowed' },
      { path: "", reason: 'property "fn" is required' },
      { path: "", reason: 'property "args" is required' },
    ]);
  });

  it("a lit value that is not JSON", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    for (const value of [undefined, Number.NaN, Number.POSITIVE_INFINITY, [1, () => 2], cyclic, new Date()]) {
      expect(validateExpression({ op: "lit", value })).toEqual(one("", "lit value must be JSON"));
    }
  });

  it("malformed var paths", () => {
    const cases: Array<[unknown, string]> = [
      ["", "var path must be a non-empty string"],
      [1, "var path must be a non-empty string"],
      [null, "var path must be a non-empty string"],
      ["answers..q", 'var path "answers..q" has an empty segment'],
      [".answers", 'var path ".answers" has an empty segment'],
      ["answers.", 'var path "answers." has an empty segment'],
      ["foo.bar", 'var path "foo.bar" must start with "answers", "context" or "signals"'],
      ["Answers.q", 'var path "Answers.q" must start with "answers", "context" or "signals"'],
      ["answer", 'var path "answer" must start with "answers", "context" or "signals"'],
    ];
    for (const [path, reason] of cases)
      expect(validateExpression({ op: "var", path })).toEqual(one("", reason));
  });

  it("a non-string or unknown fn, still checking the args", () => {
    expect(validateExpression({ op: "calc", fn: 1, args: [expr.lit(1)] })).toEqual(
      one("", 'property "fn" must be a string'),
    );
    expect(validateExpression({ op: "calc", fn: "sqrt", args: [{ op: "x" }] })).toEqual([
      { path: "", reason: 'unknown calc fn "sqrt"' },
      { path: "/args/0", reason: 'unknown op "x"' },
    ]);
    expect(validateExpression({ op: "cmp", fn: "and", args: [] })).toEqual(one("", 'unknown cmp fn "and"'));
    expect(validateExpression({ op: "bool", fn: "xor", args: [] })).toEqual(one("", 'unknown bool fn "xor"'));
    expect(validateExpression({ op: "agg", fn: "avg", args: [] })).toEqual(one("", 'unknown agg fn "avg"'));
    expect(validateExpression({ op: "agg", fn: "constructor", args: [] })).toEqual(
      one("", 'unknown agg fn "constructor"'),
    );
  });

  it("args that are not an array", () => {
    expect(validateExpression({ op: "calc", fn: "add", args: { 0: expr.lit(1) } })).toEqual(
      one("", 'property "args" must be an array'),
    );
    expect(validateExpression({ op: "if", args: "abc" })).toEqual(
      one("", 'property "args" must be an array'),
    );
  });

  it("every problem, at the JSON pointer of its node, in document order", () => {
    const node = {
      op: "calc",
      fn: "sub",
      x: 1,
      args: [
        { op: "foo" },
        3,
        { op: "var", path: "x.y" },
        {
          op: "if",
          args: [
            expr.lit(true),
            { op: "cmp", fn: "eq", args: [expr.lit(1), { op: "lit" }, expr.lit(3)] },
            { op: "agg", fn: "sum", args: [expr.lit(1), { op: "bool", fn: "not", args: [] }] },
          ],
        },
      ],
    };
    expect(validateExpression(node)).toEqual([
      { path: "", reason: 'property "x" is not allowed' },
      { path: "", reason: "calc sub takes exactly 2 args, got 4" },
      { path: "/args/0", reason: 'unknown op "foo"' },
      { path: "/args/1", reason: "node must be an object" },
      { path: "/args/2", reason: 'var path "x.y" must start with "answers", "context" or "signals"' },
      { path: "/args/3/args/1", reason: "cmp eq takes exactly 2 args, got 3" },
      { path: "/args/3/args/1/args/1", reason: 'property "value" is required' },
      { path: "/args/3/args/2/args/1", reason: "bool not takes exactly 1 arg, got 0" },
    ]);
  });
});

describe("validateExpression limits", () => {
  it("allows depth 64 and reports the first node at depth 65, once", () => {
    expect(MAX_DEPTH).toBe(64);
    expect(validateExpression(chain(64))).toEqual([]);
    expect(validateExpression(chain(65))).toEqual(one(chainPath(65), "expression is deeper than 64 levels"));
    const twoDeep = { op: "bool", fn: "and", args: [chain(70), chain(80)] };
    expect(validateExpression(twoDeep)).toEqual(
      one(`/args/0${chainPath(65 - 1)}`, "expression is deeper than 64 levels"),
    );
  });

  it("stops at the depth limit on a 100,000-deep nesting, without overflowing", () => {
    const problems = validateExpression(chain(100_000));
    expect(problems).toEqual(one(chainPath(65), "expression is deeper than 64 levels"));
  });

  it("keeps problems above the depth limit and skips what is below it", () => {
    let deep: unknown = { op: "nope" };
    for (let i = 0; i < 100; i++) deep = { op: "bool", fn: "not", args: [deep] };
    const node = { op: "bool", fn: "and", x: 1, args: [deep, { op: "lit" }] };
    expect(validateExpression(node)).toEqual([
      { path: "", reason: 'property "x" is not allowed' },
      { path: `/args/0${chainPath(64)}`, reason: "expression is deeper than 64 levels" },
      { path: "/args/1", reason: 'property "value" is required' },
    ]);
  });

  it("allows 10,000 nodes and reports the 10,001st, then stops", () => {
    expect(MAX_NODES).toBe(10_000);
    const lits = (n: number) => Array.from({ length: n }, (_, i) => expr.lit(i));
    expect(validateExpression(expr.agg("sum", ...lits(9_999)))).toEqual([]);
    expect(validateExpression(expr.agg("sum", ...lits(10_000)))).toEqual(
      one("/args/9999", "expression has more than 10000 nodes"),
    );
    const withProblems = { op: "agg", fn: "sum", args: [{ op: "lit" }, ...lits(20_000), { op: "lit" }] };
    expect(validateExpression(withProblems)).toEqual([
      { path: "/args/0", reason: 'property "value" is required' },
      { path: "/args/9999", reason: "expression has more than 10000 nodes" },
    ]);
  });

  it("counts nested nodes in document order", () => {
    // 1 root + 100 × (calc + 99 lits) = 10,001 nodes: the last lit of the last calc is one too many.
    const group = () => expr.calc("add", ...Array.from({ length: 99 }, () => expr.lit(1)));
    const node = expr.agg("count", ...Array.from({ length: 100 }, group));
    expect(validateExpression(node)).toEqual(one("/args/99/args/98", "expression has more than 10000 nodes"));
  });

  it("stays cheap for a huge args array", () => {
    const huge = { op: "calc", fn: "add", args: new Array(2_000_000).fill(expr.lit(1)) };
    const started = performance.now();
    expect(validateExpression(huge)).toEqual(one("/args/9999", "expression has more than 10000 nodes"));
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("takes other limits as options", () => {
    expect(validateExpression(chain(3), { maxDepth: 2 })).toEqual(
      one("/args/0/args/0", "expression is deeper than 2 levels"),
    );
    expect(validateExpression(expr.agg("count", expr.lit(1), expr.lit(2)), { maxNodes: 2 })).toEqual(
      one("/args/1", "expression has more than 2 nodes"),
    );
  });

  it("stops on a cyclic tree at the depth limit", () => {
    const node: { op: string; fn: string; args: unknown[] } = { op: "bool", fn: "not", args: [] };
    node.args.push(node);
    expect(validateExpression(node)).toEqual(one(chainPath(65), "expression is deeper than 64 levels"));
  });
});
