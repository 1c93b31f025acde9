import { validateExpression, validateScorecard } from "@evalp/expr";
import type { TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import {
  type AdaptivePolicy,
  COMPONENT_SCHEMAS,
  type ComponentKind,
  type Experience,
  type Guardrail,
  type ReportTemplate,
} from "./schemas.js";

/** One reason a bundle cannot enter `validated`: which component, where in its content, why. */
export type ComponentProblem = { component: ComponentKind; path: string; reason: string };

/** The six contents of a bundle, by kind. */
export type BundleContents = Record<ComponentKind, unknown>;

function shapeProblems(component: ComponentKind, schema: TSchema, content: unknown): ComponentProblem[] {
  const seen = new Set<string>();
  const problems: ComponentProblem[] = [];
  for (const error of Value.Errors(schema, content)) {
    // One problem per place: TypeBox reports a union's every branch.
    if (seen.has(error.path)) continue;
    seen.add(error.path);
    problems.push({ component, path: error.path, reason: error.message });
  }
  return problems;
}

function prefixed(component: ComponentKind, base: string, problems: { path: string; reason: string }[]) {
  return problems.map((problem) => ({ component, path: `${base}${problem.path}`, reason: problem.reason }));
}

/** Ids that must be unique within the experience, and questions' own rules (options, scale bounds). */
function experienceProblems(experience: Experience): ComponentProblem[] {
  const problems: ComponentProblem[] = [];
  const ids = new Map<string, string>();
  const claim = (id: string, path: string) => {
    const first = ids.get(id);
    if (first)
      problems.push({ component: "experience", path, reason: `id "${id}" is already used at ${first}` });
    else ids.set(id, path);
  };
  experience.sections.forEach((section, s) => {
    claim(section.id, `/sections/${s}/id`);
    section.questions.forEach((question, q) => {
      const at = `/sections/${s}/questions/${q}`;
      claim(question.id, `${at}/id`);
      const selects = question.input === "single_select" || question.input === "multi_select";
      if (selects && (question.options ?? []).length === 0) {
        problems.push({
          component: "experience",
          path: `${at}/options`,
          reason: `${question.input} needs options`,
        });
      }
      const optionIds = new Set<string>();
      (question.options ?? []).forEach((option, o) => {
        if (optionIds.has(option.id)) {
          problems.push({
            component: "experience",
            path: `${at}/options/${o}/id`,
            reason: `option id "${option.id}" repeats`,
          });
        }
        optionIds.add(option.id);
      });
      if (question.input === "scale") {
        if (question.min === undefined || question.max === undefined || !(question.min < question.max)) {
          problems.push({ component: "experience", path: at, reason: "scale needs numeric min < max" });
        }
      }
    });
    (section.scenarios ?? []).forEach((scenario, i) => {
      claim(scenario.id, `/sections/${s}/scenarios/${i}/id`);
    });
  });
  if (
    experience.target_minutes_min !== undefined &&
    experience.target_minutes_max !== undefined &&
    experience.target_minutes_min > experience.target_minutes_max
  ) {
    problems.push({
      component: "experience",
      path: "/target_minutes_min",
      reason: "is above target_minutes_max",
    });
  }
  return problems;
}

function questionIds(experience: Experience): Set<string> {
  return new Set(experience.sections.flatMap((section) => section.questions.map((question) => question.id)));
}

/**
 * Everything a bundle must satisfy to enter `validated`: each content has its kind's shape
 * (docs/expressions.md#component-contents), every expression is well-formed (docs/expressions.md), and the components agree with
 * each other (policy and guardrail name real questions, the report names real axes).
 */
export function validateBundleContents(contents: BundleContents): ComponentProblem[] {
  const problems: ComponentProblem[] = [];
  const shaped = new Set<ComponentKind>();
  for (const kind of Object.keys(COMPONENT_SCHEMAS) as ComponentKind[]) {
    const found = shapeProblems(kind, COMPONENT_SCHEMAS[kind], contents[kind]);
    problems.push(...found);
    if (found.length === 0) shaped.add(kind);
  }
  const experience = shaped.has("experience") ? (contents.experience as Experience) : null;
  if (experience) problems.push(...experienceProblems(experience));
  if (shaped.has("scorecard"))
    problems.push(...prefixed("scorecard", "", validateScorecard(contents.scorecard)));
  if (shaped.has("adaptive_policy")) {
    const policy = contents.adaptive_policy as AdaptivePolicy;
    const known = experience ? questionIds(experience) : null;
    policy.skip.forEach((rule, i) => {
      problems.push(...prefixed("adaptive_policy", `/skip/${i}/when`, validateExpression(rule.when)));
      if (known && !known.has(rule.question_id)) {
        problems.push({
          component: "adaptive_policy",
          path: `/skip/${i}/question_id`,
          reason: `no question "${rule.question_id}" in the experience`,
        });
      }
    });
  }
  if (shaped.has("guardrail")) {
    (contents.guardrail as Guardrail).rules.forEach((rule, i) => {
      problems.push(...prefixed("guardrail", `/rules/${i}/when`, validateExpression(rule.when)));
    });
  }
  if (shaped.has("report_template") && shaped.has("scorecard")) {
    const axes = new Set((contents.scorecard as { axes: { id: string }[] }).axes.map((axis) => axis.id));
    (contents.report_template as ReportTemplate).sections.forEach((section, s) => {
      section.axes.forEach((axis, a) => {
        if (!axes.has(axis)) {
          problems.push({
            component: "report_template",
            path: `/sections/${s}/axes/${a}`,
            reason: `no axis "${axis}" in the scorecard`,
          });
        }
      });
    });
  }
  return problems;
}
