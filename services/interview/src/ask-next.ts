import type { NewEntry } from "./db/entries.js";
import type { Step } from "./steps.js";

/**
 * The `question_asked` entry for the question that is current after a step, when it is not the
 * one already being asked (a correction of an earlier answer asks nothing new). Moves the
 * interview's `current_question_id` along. The transcript shows the prompt as the agent's line.
 */
export function askNext(step: Step): NewEntry[] {
  const { interview, flow } = step;
  const current = flow.progress(interview.answers).current;
  const id = current?.question.id ?? null;
  if (id === interview.current_question_id) return [];
  interview.current_question_id = id;
  if (!current) return [];
  return [
    {
      kind: "question_asked",
      actor: "system",
      attempt: interview.answers[current.question.id]?.attempts ?? 0,
      questionId: current.question.id,
      sectionId: current.section.id,
      payload: {
        speaker: "agent",
        modality: "text",
        text: current.question.prompt,
        input: current.question.input,
      },
    },
  ];
}
