import { describe, expect, it } from "vitest";
import { expr } from "./builders.js";
import { compileExpression } from "./compile.js";
import { ExpressionInvalidError } from "./errors.js";
import { evaluate } from "./evaluate.js";
import type { JsonValue } from "./json.js";
import type { ExpressionNode } from "./nodes.js";
import type { Scope } from "./ops/var.js";

const NOW = new Date("2025-06-15T12:00:00Z");
const run = (node: ExpressionNode, scope: Scope = {}) =>
  evaluate(compileExpression(node), scope, { now: NOW });

describe("evaluate", () => {
  it("returns lit values as they are", () => {
    for (const value of [null, true, 0, -2.5, "x", [1, [2]], { a: { b: null } }] as JsonValue[]) {
      expect(run(expr.lit(value)).value).toEqual(value);
    }
  });

  it("records one step per node, children before parents, args left to right", () => {
    const node = expr.calc(
      "add",
      expr.lit(1),
      expr.calc("mul", expr.var("answers.q1.value"), expr.lit(2)),
      expr.agg("count", expr.lit(null)),
    );
    const { value, trace } = run(node, { answers: { q1: { value: 3 } } });
    expect(value).toBe(7);
    expect(trace).toEqual([
      { path: "/args/0", op: "lit", value: 1 },
      { path: "/args/1/args/0", op: "var", value: 3 },
      { path: "/args/1/args/1", op: "lit", value: 2 },
      { path: "/args/1", op: "calc", fn: "mul", value: 6 },
      { path: "/args/2/args/0", op: "lit", value: null },
      { path: "/args/2", op: "agg", fn: "count", value: 0 },
      { path: "", op: "calc", fn: "add", value: 7 },
    ]);
    // `fn` and `error` are absent rather than undefined, so the steps serialise as the contract shows.
    expect(Object.keys(trace[0] ?? {})).toEqual(["path", "op", "value"]);
  });

  it("marks the node of a type error, whose parent only sees a null", () => {
    const node = expr.calc("add", expr.lit(1), expr.calc("neg", expr.lit("x")));
    const { value, trace } = run(node);
    expect(value).toBeNull();
    expect(trace).toEqual([
      { path: "/args/0", op: "lit", value: 1 },
      { path: "/args/1/args/0", op: "lit", value: "x" },
      { path: "/args/1", op: "calc", fn: "neg", value: null, error: "type_error" },
      { path: "", op: "calc", fn: "add", value: null },
    ]);
  });

  it("evaluates the condition of if and only the branch it takes", () => {
    const poison = expr.calc("neg", expr.lit("not a number"));
    const taken = run(expr.if(expr.lit(true), expr.lit("then"), poison));
    expect(taken.value).toBe("then");
    expect(taken.trace.map((s) => s.path)).toEqual(["/args/0", "/args/1", ""]);
    expect(taken.trace.some((s) => s.error)).toBe(false);

    for (const cond of [false, null]) {
      const other = run(expr.if(expr.lit(cond), poison, expr.lit("else")));
      expect(other.value).toBe("else");
      expect(other.trace.map((s) => s.path)).toEqual(["/args/0", "/args/2", ""]);
    }
  });

  it("is a type error for a non-boolean if condition, and takes neither branch", () => {
    for (const cond of [1, "true", [], {}]) {
      const { value, trace } = run(expr.if(expr.lit(cond), expr.lit(1), expr.lit(2)));
      expect(value).toBeNull();
      expect(trace).toEqual([
        { path: "/args/0", op: "lit", value: cond },
        { path: "", op: "if", value: null, error: "type_error" },
      ]);
    }
  });

  it("evaluates every arg of and/or (no short circuit), so every type error shows", () => {
    const { trace } = run(expr.bool("and", expr.lit(false), expr.bool("not", expr.lit(3))));
    expect(trace.map((s) => [s.path, s.error])).toEqual([
      ["/args/0", undefined],
      ["/args/1/args/0", undefined],
      ["/args/1", "type_error"],
      ["", undefined],
    ]);
  });

  it("keeps compiled lit values apart from the source node and from results", () => {
    const source = { op: "lit" as const, value: { list: [1, 2] } };
    const compiled = compileExpression(source);
    source.value.list.push(3);
    const { value } = evaluate(compiled, {});
    expect(value).toEqual({ list: [1, 2] });
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen((value as { list: unknown }).list)).toBe(true);
    expect(compiled.nodeCount).toBe(1);
    expect(compiled.node).toBe(source);
  });

  it("is total on odd scopes: non-JSON-looking inputs read as absent, never throw", () => {
    const node = expr.bool(
      "or",
      expr.cmp("eq", expr.var("answers.a"), expr.var("context.b")),
      expr.in(expr.var("signals.s"), expr.var("answers.list")),
    );
    for (const scope of [
      {},
      { answers: null, context: [], signals: "s" },
      { answers: 1, context: true },
      { answers: { a: { deep: [1] }, list: "no" }, context: { b: { deep: [1] } } },
    ] as Scope[]) {
      expect(() => run(node, scope)).not.toThrow();
    }
    expect(run(node, { answers: { a: { deep: [1] } }, context: { b: { deep: [1] } } }).value).toBe(true);
  });

  it("compares very deep scope values without recursing", () => {
    let a: JsonValue = 1;
    let b: JsonValue = 1;
    for (let i = 0; i < 100_000; i++) {
      a = [a];
      b = [b];
    }
    const node = expr.cmp("eq", expr.var("answers.a"), expr.var("answers.b"));
    expect(run(node, { answers: { a, b } }).value).toBe(true);
  });
});

describe("compileExpression", () => {
  it("throws ExpressionInvalidError with the first problem and all of them", () => {
    const node = { op: "calc", fn: "sub", args: [{ op: "nope" }, { op: "lit" }, { op: "lit", value: 1 }] };
    let error: unknown;
    try {
      compileExpression(node);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ExpressionInvalidError);
    expect(error).toBeInstanceOf(Error);
    const invalid = error as ExpressionInvalidError;
    expect(invalid.name).toBe("ExpressionInvalidError");
    expect(invalid.path).toBe("");
    expect(invalid.reason).toBe("calc sub takes exactly 2 args, got 3");
    expect(invalid.message).toBe("calc sub takes exactly 2 args, got 3 (at the root)");
    expect(invalid.problems).toEqual([
      { path: "", reason: "calc sub takes exactly 2 args, got 3" },
      { path: "/args/0", reason: 'unknown op "nope"' },
      { path: "/args/1", reason: 'property "value" is required' },
    ]);
  });

  it("names the path of a nested problem in the message", () => {
    expect(() => compileExpression(expr.calc("neg", { op: "var", path: "x" } as ExpressionNode))).toThrow(
      'var path "x" must start with "answers", "context" or "signals" (at /args/0)',
    );
  });

  it("has a message even without problems", () => {
    expect(new ExpressionInvalidError([]).reason).toBe("expression is invalid");
  });

  it("counts nodes", () => {
    const node = expr.if(expr.lit(true), expr.agg("sum", expr.lit(1), expr.lit(2)), expr.lit(0));
    expect(compileExpression(node).nodeCount).toBe(6);
  });
});
