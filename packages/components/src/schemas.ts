import { type Static, Type } from "@sinclair/typebox";

/**
 * The six component contents of docs/expressions.md#component-contents as JSON Schemas. "More fields may be added", so
 * objects allow extra properties; expression nodes are left open here and checked by
 * `@evalp/expr`, which knows their grammar.
 */
const Id = Type.String({ minLength: 1, maxLength: 255 });
const Text = Type.String({ minLength: 1 });
const Expression = Type.Unknown({ description: "An expression node (docs/expressions.md)" });

export const COMPONENT_KINDS = [
  "scorecard",
  "experience",
  "context",
  "guardrail",
  "adaptive_policy",
  "report_template",
] as const;
export type ComponentKind = (typeof COMPONENT_KINDS)[number];

export const INPUT_KINDS = ["single_select", "multi_select", "text", "number", "scale"] as const;

const Option = Type.Object({ id: Id, label: Type.String() });

export const QuestionSchema = Type.Object({
  id: Id,
  prompt: Text,
  input: Type.Union(INPUT_KINDS.map((kind) => Type.Literal(kind))),
  options: Type.Optional(Type.Array(Option)),
  required: Type.Optional(Type.Boolean()),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
});

export const ScenarioSchema = Type.Object({
  id: Id,
  prompt: Text,
  framing: Type.Union([Type.Literal("stated_intention"), Type.Literal("past_behaviour")]),
  max_follow_ups: Type.Integer({ minimum: 0 }),
  criteria: Type.Array(Type.Object({ id: Id, label: Type.String() })),
});

export const ExperienceSchema = Type.Object(
  {
    kind: Type.Literal("experience"),
    title: Type.Optional(Type.String()),
    target_minutes_min: Type.Optional(Type.Integer({ minimum: 0 })),
    target_minutes_max: Type.Optional(Type.Integer({ minimum: 0 })),
    require_tap_confirmation: Type.Optional(Type.Boolean()),
    sections: Type.Array(
      Type.Object({
        id: Id,
        title: Type.String(),
        description: Type.Optional(Type.String()),
        questions: Type.Array(QuestionSchema),
        scenarios: Type.Optional(Type.Array(ScenarioSchema)),
      }),
      { minItems: 1 },
    ),
  },
  { title: "ExperienceContent" },
);

export const ScorecardSchema = Type.Object(
  {
    kind: Type.Literal("scorecard"),
    axes: Type.Array(
      Type.Object({
        id: Id,
        label: Type.String(),
        expr: Expression,
        bands: Type.Array(
          Type.Object({ id: Id, label: Type.String(), min: Type.Number(), max: Type.Number() }),
        ),
      }),
    ),
  },
  { title: "ScorecardContent" },
);

export const AdaptivePolicySchema = Type.Object(
  {
    kind: Type.Literal("adaptive_policy"),
    skip: Type.Array(Type.Object({ question_id: Id, when: Expression })),
  },
  { title: "AdaptivePolicyContent" },
);

export const GuardrailSchema = Type.Object(
  {
    kind: Type.Literal("guardrail"),
    rules: Type.Array(
      Type.Object({
        id: Id,
        when: Expression,
        action: Type.Union([Type.Literal("flag"), Type.Literal("end")]),
      }),
    ),
  },
  { title: "GuardrailContent" },
);

export const ContextSchema = Type.Object(
  { kind: Type.Literal("context"), variables: Type.Record(Type.String(), Type.Unknown()) },
  { title: "ContextContent" },
);

export const ReportTemplateSchema = Type.Object(
  {
    kind: Type.Literal("report_template"),
    title: Type.String(),
    sections: Type.Array(Type.Object({ id: Id, title: Type.String(), axes: Type.Array(Id) })),
  },
  { title: "ReportTemplateContent" },
);

/** The schema of each kind, as entering `validated` checks it and /openapi.json publishes it. */
export const COMPONENT_SCHEMAS = {
  scorecard: ScorecardSchema,
  experience: ExperienceSchema,
  context: ContextSchema,
  guardrail: GuardrailSchema,
  adaptive_policy: AdaptivePolicySchema,
  report_template: ReportTemplateSchema,
} as const;

export type Experience = Static<typeof ExperienceSchema>;
export type Question = Static<typeof QuestionSchema>;
export type Scenario = Static<typeof ScenarioSchema>;
export type AdaptivePolicy = Static<typeof AdaptivePolicySchema>;
export type Guardrail = Static<typeof GuardrailSchema>;
export type ContextContent = Static<typeof ContextSchema>;
export type ReportTemplate = Static<typeof ReportTemplateSchema>;
