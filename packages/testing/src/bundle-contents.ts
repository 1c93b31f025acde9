/**
 * A valid set of the six component contents (docs/expressions.md#component-contents), the shape a client's first bundle
 * takes: three questions, a two-axis scorecard, context defaults, a guardrail, an adaptive
 * rule and a report layout. Tests copy and break it.
 */
export function sampleContents() {
  return {
    scorecard: {
      kind: "scorecard",
      axes: [
        {
          id: "experience",
          label: "Experience",
          expr: {
            op: "calc",
            fn: "mul",
            args: [
              { op: "var", path: "answers.q1.value" },
              { op: "lit", value: 10 },
            ],
          },
          bands: [
            { id: "junior", label: "Junior", min: 0, max: 30 },
            { id: "senior", label: "Senior", min: 30, max: 1000 },
          ],
        },
        {
          id: "skill",
          label: "Skill",
          expr: { op: "var", path: "answers.q3.value" },
          bands: [
            { id: "low", label: "Low", min: 0, max: 3 },
            { id: "high", label: "High", min: 3, max: 6 },
          ],
        },
      ],
    },
    experience: {
      kind: "experience",
      title: "Graduate intake",
      target_minutes_min: 5,
      target_minutes_max: 10,
      sections: [
        {
          id: "s1",
          title: "About you",
          questions: [
            {
              id: "q1",
              prompt: "How many years of experience do you have?",
              input: "number",
              required: true,
            },
            {
              id: "q2",
              prompt: "Which team would you like to join?",
              input: "single_select",
              options: [
                { id: "a", label: "Alpha" },
                { id: "b", label: "Beta" },
              ],
              required: true,
            },
            { id: "q3", prompt: "Rate your SQL", input: "scale", min: 1, max: 5, required: true },
          ],
        },
      ],
    },
    context: { kind: "context", variables: { as_of: "2026-01-01", region: "eu" } },
    guardrail: {
      kind: "guardrail",
      rules: [
        {
          id: "negative-experience",
          when: {
            op: "cmp",
            fn: "lt",
            args: [
              { op: "var", path: "answers.q1.value" },
              { op: "lit", value: 0 },
            ],
          },
          action: "end",
        },
      ],
    },
    adaptive_policy: {
      kind: "adaptive_policy",
      skip: [
        {
          question_id: "q3",
          when: {
            op: "cmp",
            fn: "eq",
            args: [
              { op: "var", path: "answers.q2.option_id" },
              { op: "lit", value: "b" },
            ],
          },
        },
      ],
    },
    report_template: {
      kind: "report_template",
      title: "Candidate report",
      sections: [{ id: "summary", title: "Summary", axes: ["experience", "skill"] }],
    },
  };
}
