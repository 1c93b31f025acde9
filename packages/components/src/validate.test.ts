import { sampleContents } from "@evalp/testing";
import { describe, expect, it } from "vitest";
import { validateBundleContents } from "./validate.js";

describe("validateBundleContents", () => {
  it("accepts the sample bundle", () => {
    expect(validateBundleContents(sampleContents())).toEqual([]);
  });

  it("reports shape problems with JSON pointers from the content root", () => {
    const contents = sampleContents();
    (contents.experience.sections[0]!.questions[0] as Record<string, unknown>).input = "dropdown";
    (contents.context as Record<string, unknown>).variables = [];
    const problems = validateBundleContents(contents);
    expect(problems).toContainEqual(
      expect.objectContaining({ component: "experience", path: "/sections/0/questions/0/input" }),
    );
    expect(problems).toContainEqual(expect.objectContaining({ component: "context", path: "/variables" }));
  });

  it("reports every malformed expression, in the scorecard, the policy and the guardrail", () => {
    const contents = sampleContents();
    (contents.scorecard.axes[0]!.expr.args![1] as Record<string, unknown>).op = "nope";
    (contents.guardrail.rules[0]!.when as Record<string, unknown>).fn = "between";
    (contents.adaptive_policy.skip[0]!.when as Record<string, unknown>).extra = 1;
    const problems = validateBundleContents(contents);
    expect(problems.map((p) => `${p.component}${p.path}`)).toEqual([
      "scorecard/axes/0/expr/args/1",
      "adaptive_policy/skip/0/when",
      "guardrail/rules/0/when",
    ]);
  });

  it("checks that components agree: duplicate ids, select options, scale bounds, known questions and axes", () => {
    const contents = sampleContents();
    const questions = contents.experience.sections[0]!.questions as Record<string, unknown>[];
    questions[1]!.id = "q1";
    questions[1]!.options = [];
    questions[2]!.max = 0;
    contents.adaptive_policy.skip[0]!.question_id = "q9";
    contents.report_template.sections[0]!.axes.push("charisma");
    const reasons = validateBundleContents(contents).map((p) => `${p.component}${p.path}: ${p.reason}`);
    expect(reasons).toEqual([
      'experience/sections/0/questions/1/id: id "q1" is already used at /sections/0/questions/0/id',
      "experience/sections/0/questions/1/options: single_select needs options",
      "experience/sections/0/questions/2: scale needs numeric min < max",
      'adaptive_policy/skip/0/question_id: no question "q9" in the experience',
      'report_template/sections/0/axes/2: no axis "charisma" in the scorecard',
    ]);
  });

  it("reports a missing or wrong-kind component", () => {
    const contents = { ...sampleContents(), guardrail: { kind: "context", variables: {} } };
    expect(validateBundleContents(contents)).toContainEqual(
      expect.objectContaining({ component: "guardrail", path: "/kind" }),
    );
  });
});
