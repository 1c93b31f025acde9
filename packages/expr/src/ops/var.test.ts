import { describe, expect, it } from "vitest";
import { expr } from "../builders.js";
import { compileExpression } from "../compile.js";
import { evaluate } from "../evaluate.js";
import type { JsonValue } from "../json.js";
import type { Scope } from "./var.js";

const scope: Scope = {
  answers: {
    q1: { value: 7 },
    q2: { option_ids: ["a", "b"] },
    q3: { text: "hello" },
    nothing: null,
    "with space": 1,
  },
  context: { as_of: "2020-01-01", nested: { deep: [{ x: 1 }] } },
  signals: { pace: 0.5 },
};

function read(path: string, s: Scope = scope): JsonValue {
  return evaluate(compileExpression(expr.var(path)), s).value;
}

describe("var", () => {
  it("reads dotted paths into answers, context and signals", () => {
    expect(read("answers.q1.value")).toBe(7);
    expect(read("answers.q3.text")).toBe("hello");
    expect(read("context.as_of")).toBe("2020-01-01");
    expect(read("signals.pace")).toBe(0.5);
    expect(read("answers.q1")).toEqual({ value: 7 });
    expect(read("answers")).toBe(scope.answers);
    expect(read("answers.with space")).toBe(1);
  });

  it("reads into arrays by canonical index", () => {
    expect(read("answers.q2.option_ids.1")).toBe("b");
    expect(read("context.nested.deep.0.x")).toBe(1);
    expect(read("answers.q2.option_ids.2")).toBeNull();
    expect(read("answers.q2.option_ids.01")).toBeNull();
    expect(read("answers.q2.option_ids.-1")).toBeNull();
    expect(read("answers.q2.option_ids.length")).toBeNull();
  });

  it("gives null for anything absent, and never reaches inherited properties", () => {
    expect(read("answers.q9")).toBeNull();
    expect(read("answers.q9.value")).toBeNull();
    expect(read("answers.nothing")).toBeNull();
    expect(read("answers.nothing.x")).toBeNull();
    expect(read("answers.q3.text.length")).toBeNull();
    expect(read("answers.q1.value.x")).toBeNull();
    expect(read("answers.constructor")).toBeNull();
    expect(read("answers.toString")).toBeNull();
    expect(read("answers.__proto__")).toBeNull();
    expect(read("signals.pace", {})).toBeNull();
    expect(read("answers.x", { answers: { x: undefined } })).toBeNull();
    expect(read("answers", { answers: undefined })).toBeNull();
  });

  it("treats a scope that is not an object as empty", () => {
    expect(read("answers.q1", null as unknown as Scope)).toBeNull();
  });
});
