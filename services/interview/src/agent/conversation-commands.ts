import type { Handler } from "./command.js";
import { attemptOf, fieldProblem, inProgress, questionOf, writeEntry } from "./command.js";

/** What was said, by the participant or the agent, at the question being asked. */
export const utterance: Handler = async (step, c) => {
  inProgress(step);
  const startedAt = new Date(String(c.started_at));
  return writeEntry(
    step,
    {
      kind: "utterance",
      actor: c.speaker === "participant" ? "participant" : "agent",
      occurredAt: startedAt,
      questionId: step.interview.current_question_id ?? undefined,
      payload: {
        speaker: c.speaker,
        modality: c.modality,
        text: c.text,
        started_at: startedAt.toISOString(),
        ...(typeof c.ended_at === "string" ? { ended_at: new Date(c.ended_at).toISOString() } : {}),
        interrupted: c.interrupted === true,
      },
    },
    false,
  );
};

/** The agent's clarification of one question. */
export const clarify: Handler = async (step, c) => {
  inProgress(step);
  const placed = questionOf(step, String(c.question_id));
  return writeEntry(
    step,
    {
      kind: "clarification",
      actor: "agent",
      questionId: placed.question.id,
      sectionId: placed.section.id,
      attempt: attemptOf(step, placed.question.id),
      payload: { type: c.clarification_type, speaker: "agent", text: c.text },
    },
    false,
  );
};

/** The agent's follow-up on answers that do not agree with each other. */
export const consistencyFollowUp: Handler = async (step, c) => {
  inProgress(step);
  const ids = c.question_ids as string[];
  ids.forEach((id, index) => {
    if (!step.flow.find(id))
      throw fieldProblem(`question_ids.${index}`, id, "is not a question of this interview");
  });
  return writeEntry(
    step,
    {
      kind: "clarification",
      actor: "agent",
      payload: { type: "consistency", question_ids: ids, speaker: "agent", text: c.text },
    },
    false,
  );
};

/** Usage and provider errors are taken whatever the interview's status (a last report after the end). */
export const report: Handler = async (step, c) =>
  writeEntry(
    step,
    {
      kind: "agent_report",
      actor: "agent",
      payload: { usage: c.usage ?? [], errors: c.errors ?? [], latency: c.latency ?? {} },
    },
    false,
  );
