import { describe, expect, it } from "vitest";
import * as api from "./index.js";

describe("the package's entry point", () => {
  it("exports the whole runtime API and nothing internal", () => {
    expect(Object.keys(api).sort()).toEqual([
      "AGG_FNS",
      "BOOL_FNS",
      "CALC_FNS",
      "CMP_FNS",
      "CompiledExpression",
      "CompiledScorecard",
      "ExpressionInvalidError",
      "MAX_AXES",
      "MAX_COMPARISON_WORK",
      "MAX_DEPTH",
      "MAX_NODES",
      "MAX_SCORECARD_NODES",
      "TRACE_BUDGET_BYTES",
      "TRACE_VALUE_MAX_BYTES",
      "VAR_ROOTS",
      "appendPointer",
      "compileExpression",
      "compileScorecard",
      "escapePointerToken",
      "evaluate",
      "evaluateScorecard",
      "expr",
      "isJsonValue",
      "jsonEqual",
      "resolvePointer",
      "validateExpression",
      "validateScorecard",
    ]);
  });

  it("works end to end from a scorecard in JSON", () => {
    const content = JSON.parse(`{
      "kind": "scorecard",
      "axes": [{
        "id": "fit", "label": "Fit",
        "expr": {"op": "if", "args": [
          {"op": "in", "args": [{"op": "var", "path": "answers.role.option_id"}, {"op": "lit", "value": ["dev", "ops"]}]},
          {"op": "calc", "fn": "round", "args": [{"op": "agg", "fn": "median", "args": [
            {"op": "var", "path": "answers.a.value"}, {"op": "var", "path": "answers.b.value"}]}]},
          {"op": "lit", "value": 0}
        ]},
        "bands": [{"id": "lo", "label": "Low", "min": 0, "max": 5}, {"id": "hi", "label": "High", "min": 5, "max": 11}]
      }]
    }`);
    expect(api.validateScorecard(content)).toEqual([]);
    const answers = { role: { option_id: "dev" }, a: { value: 4 }, b: { value: 7 } };
    const result = api.evaluateScorecard(content, { answers });
    expect(result.axes).toEqual([{ axis: "fit", label: "Fit", score: 6, band_id: "hi", band_label: "High" }]);
    expect(result.trace.axes.fit?.map((s) => s.path)).toEqual([
      "/args/0/args/0",
      "/args/0/args/1",
      "/args/0",
      "/args/1/args/0/args/0",
      "/args/1/args/0/args/1",
      "/args/1/args/0",
      "/args/1",
      "",
    ]);
  });
});
