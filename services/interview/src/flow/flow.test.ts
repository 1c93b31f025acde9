import { sampleContents } from "@evalp/testing";
import { describe, expect, it } from "vitest";
import { type AnswerMap, type Components, Flow } from "./flow.js";
import { snapshotOf } from "./snapshot.js";
import { invalidTransition, participantStatus } from "./statuses.js";

function components(): Components {
  const contents = sampleContents();
  contents.experience.sections.push({
    id: "s2",
    title: "Extras",
    questions: [{ id: "q4", prompt: "Anything else?", input: "text", required: false }],
  } as never);
  contents.guardrail.rules.push({
    id: "many-years",
    when: {
      op: "cmp",
      fn: "gt",
      args: [
        { op: "var", path: "answers.q1.value" },
        { op: "lit", value: 40 },
      ],
    },
    action: "flag",
  } as never);
  return contents as unknown as Components;
}

const answered = (answers: Record<string, Record<string, unknown>>): AnswerMap =>
  Object.fromEntries(
    Object.entries(answers).map(([id, answer]) => [id, { answer, entry_id: `e-${id}`, attempts: 1 }]),
  );

describe("Flow", () => {
  const flow = new Flow(components());

  it("asks the first unanswered applicable question; optional ones are not missing", () => {
    const start = flow.progress({});
    expect(start.current?.question.id).toBe("q1");
    expect(start.missing.map((placed) => placed.question.id)).toEqual(["q1", "q2", "q3"]);
    expect(start.progress).toBe(0);
    const later = flow.progress(answered({ q1: { value: 2 }, q2: { option_id: "a" }, q3: { value: 3 } }));
    expect(later.current?.question.id).toBe("q4");
    expect(later.missing).toEqual([]);
    expect(later.progress).toBe(3 / 4);
  });

  it("skips while the policy's `when` is true, against the answers so far", () => {
    const beta = flow.progress(answered({ q1: { value: 2 }, q2: { option_id: "b" } }));
    expect([...beta.skipped]).toEqual(["q3"]);
    expect(beta.current?.question.id).toBe("q4");
    expect(beta.progress).toBe(2 / 3);
    // A null `when` (q2 unanswered) asks.
    expect(flow.skipped(answered({ q1: { value: 2 } })).size).toBe(0);
  });

  it("runs the guardrail: every true flag, the first true end", () => {
    expect(flow.guardrail(answered({ q1: { value: 50 } }))).toEqual({ flags: ["many-years"], end: null });
    expect(flow.guardrail(answered({ q1: { value: -1 } }))).toEqual({
      flags: [],
      end: "negative-experience",
    });
    expect(flow.guardrail(answered({ q1: { value: "x" } }))).toEqual({ flags: [], end: null });
  });

  it("builds the participant's snapshot with the current section's counts", () => {
    const snapshot = snapshotOf(flow, {
      id: "i",
      status: "active",
      consented: true,
      answers: answered({ q1: { value: 2 }, q2: { option_id: "a" }, q3: { value: 3 } }),
      revision: 5,
      pausedReason: null,
    });
    expect(snapshot.status).toBe("in_progress");
    expect(snapshot.question?.id).toBe("q4");
    expect(snapshot.section).toMatchObject({ id: "s2", position: 2, total: 2, count: 1, answered: 0 });
    expect(snapshot.readyToFinish).toBe(true);
    const before = snapshotOf(flow, {
      id: "i",
      status: "active",
      consented: false,
      answers: {},
      revision: 1,
      pausedReason: null,
    });
    expect(before).toMatchObject({ status: "not_started", readyToFinish: false, available: true });
    expect(before.question).toBeUndefined();
  });
});

describe("statuses", () => {
  it("map operator statuses to the participant's and name what is reachable", () => {
    expect(participantStatus("active", false)).toBe("not_started");
    expect(participantStatus("ended_incomplete", true)).toBe("ended");
    expect(invalidTransition("completed", "in_progress", "interview_over").context).toEqual({
      from: "completed",
      to: "in_progress",
      allowed: [],
      reason: "interview_over",
    });
  });
});
