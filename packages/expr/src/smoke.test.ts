import { expect, it } from "vitest";
import { compileExpression, evaluate, evaluateScorecard, validateExpression } from "./index.js";
it("smoke", () => {
  const c = compileExpression({ op: "calc", fn: "add", args: [{ op: "lit", value: 1 }, { op: "var", path: "answers.q1.value" }] });
  console.log(JSON.stringify(evaluate(c, { answers: { q1: { value: 2 } } })));
  console.log(JSON.stringify(validateExpression({ op: "calc", fn: "sub", x: 1, args: [{ op: "foo" }, 3, { op: "var", path: "x.y" }] })));
  let deep: unknown = { op: "lit", value: 1 };
  for (let i = 0; i < 100000; i++) deep = { op: "bool", fn: "not", args: [deep] };
  console.log(JSON.stringify(validateExpression(deep)).slice(0, 300));
  console.log(JSON.stringify(evaluateScorecard({ kind: "scorecard", axes: [{ id: "a", label: "A", expr: { op: "years_since", args: [{ op: "lit", value: "2000-02-29" }] }, bands: [{ id: "b", label: "B", min: 0, max: 30 }] }] }, {}, { now: new Date("2025-02-28T12:00:00Z") })));
  expect(1).toBe(1);
});
