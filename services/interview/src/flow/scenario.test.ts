import { sampleContents } from "@evalp/testing";
import { describe, expect, it } from "vitest";
import { stableJson } from "../agent/fingerprint.js";
import type { AgentState } from "./agent-state.js";
import { type AnswerMap, type Components, Flow } from "./flow.js";
import { snapshotOf } from "./snapshot.js";

function components(): Components {
  const contents = sampleContents();
  const section = contents.experience.sections[0] as Record<string, unknown>;
  section.scenarios = [
    {
      id: "sc1",
      prompt: "Tell me about an incident.",
      framing: "past_behaviour",
      max_follow_ups: 1,
      criteria: [
        { id: "c1", label: "One" },
        { id: "c2", label: "Two" },
      ],
    },
  ];
  contents.experience.sections.push({
    id: "s2",
    title: "Extras",
    questions: [{ id: "q4", prompt: "Anything else?", input: "text", required: false }],
  } as never);
  return contents as unknown as Components;
}

const answers = (ids: string[]): AnswerMap =>
  Object.fromEntries(ids.map((id) => [id, { answer: { value: 3 }, entry_id: id, attempts: 1 }]));

function view(answered: string[], agent: AgentState) {
  return snapshotOf(new Flow(components()), {
    id: "i",
    status: "active",
    consented: true,
    answers: answers(answered),
    revision: 1,
    pausedReason: null,
    agent,
  });
}

describe("scenarios in the participant's view", () => {
  it("follow their section's questions and stay until every criterion is covered", () => {
    expect(view(["q1", "q2"], {}).itemKind).toBe("question");
    const current = view(["q1", "q2", "q3"], { scenarios: { sc1: { follow_ups: 1, covered: ["c1"] } } });
    expect(current.itemKind).toBe("scenario");
    expect(current.question).toBeUndefined();
    expect(current.scenario).toMatchObject({ id: "sc1", follow_ups_used: 1, follow_ups_remaining: 0 });
    const done = view(["q1", "q2", "q3"], { scenarios: { sc1: { follow_ups: 1, covered: ["c1", "c2"] } } });
    expect(done.itemKind).toBe("question");
    expect(done.question?.id).toBe("q4");
  });

  it("count rejected proposals in the question's attempt and show the pending proposal", () => {
    const snapshot = view([], {
      rejections: { q1: 2 },
      proposal: {
        id: "p",
        seq: 5,
        question_id: "q1",
        proposed_answer: { value: 4 },
        confirmation_text: "Four?",
        created_at: "2026-01-01T00:00:00.000Z",
      },
    });
    expect(snapshot.attempt).toBe(2);
    expect(snapshot.pendingProposal).toMatchObject({ id: "p", kind: "answer", question: { id: "q1" } });
  });
});

describe("command fingerprints", () => {
  it("ignore key order", () => {
    expect(stableJson({ b: 1, a: { d: [1, { y: 2, x: 1 }], c: null } })).toBe(
      stableJson({ a: { c: null, d: [1, { x: 1, y: 2 }] }, b: 1 }),
    );
  });
});
