import { create } from "@bufbuild/protobuf";
import { type AppError, validationError } from "@evalp/kit";
import {
  type SubmitAnswerRequest,
  type SubmitAnswerResponse,
  SubmitAnswerResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { askNext } from "../ask-next.js";
import { appendEntries, type NewEntry } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import type { EntryRow } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { answerProblems, answerText } from "../flow/answers.js";
import { requireInProgress } from "../flow/statuses.js";
import { closeInterview, runStep, type Step, snapshotOfRow } from "../steps.js";

export function questionIdProblem(questionId: string, reason: string): AppError {
  const error = `question ${JSON.stringify(questionId)} ${reason}`;
  return validationError([
    {
      loc: ["body", "question_id"],
      type: "value_error",
      msg: `Value error, ${error}`,
      input: questionId,
      ctx: { error },
    },
  ]);
}

/**
 * Records the answer (or its correction), then runs the guardrail: `flag` rules record a
 * `clarification`, the first `end` rule ends the interview (`ended_incomplete`, the rule's id as
 * `ended_reason`); otherwise the next question is asked. A confirmed proposal (docs/interview.md#the-agent-protocol)
 * passes `via`: the answer's `ref_entry_id` is the proposal and its payload says how it was
 * confirmed. Any answer to the question of a pending proposal settles that proposal.
 */
export async function recordAnswer(
  step: Step,
  questionId: string,
  answer: Record<string, unknown>,
  via?: { refEntryId: string; payload: Record<string, unknown> },
): Promise<EntryRow> {
  const { tx, interview, flow, now } = step;
  const placed = flow.find(questionId);
  if (!placed) throw questionIdProblem(questionId, "is not a question of this interview");
  if (flow.skipped(interview.answers).has(questionId)) {
    throw questionIdProblem(questionId, "is skipped by the adaptive policy");
  }
  const problems = answerProblems(placed.question, answer);
  if (problems.length > 0) throw validationError(problems);

  const previous = interview.answers[questionId];
  const attempts = (previous?.attempts ?? 0) + 1;
  const located = { questionId, sectionId: placed.section.id, attempt: attempts };
  const [recorded] = await appendEntries(
    tx,
    interview,
    [
      {
        kind: previous ? "answer_corrected" : "answer_recorded",
        actor: "participant",
        ...located,
        refEntryId: via?.refEntryId ?? previous?.entry_id,
        payload: {
          speaker: "participant",
          modality: "text",
          text: answerText(placed.question, answer),
          answer,
          ...(previous ? { previous_answer: previous.answer } : {}),
          ...(via?.payload ?? {}),
        },
      },
    ],
    now,
  );
  if (!recorded) throw new Error("the answer entry was not written");
  interview.answers = { ...interview.answers, [questionId]: { answer, entry_id: recorded.id, attempts } };
  if (interview.agent.proposal?.question_id === questionId)
    interview.agent = { ...interview.agent, proposal: null };

  const outcome = flow.guardrail(interview.answers);
  const after: NewEntry[] = outcome.flags.map((rule) => ({
    kind: "clarification",
    actor: "system",
    ...located,
    refEntryId: recorded.id,
    payload: { type: "guardrail", rule_id: rule },
  }));
  if (outcome.end) {
    interview.status = "ended_incomplete";
    interview.ended_reason = outcome.end;
    interview.current_question_id = null;
    after.push({
      kind: "status_changed",
      actor: "system",
      payload: { from: "active", to: "ended_incomplete", reason: outcome.end },
    });
  } else {
    after.push(...askNext(step));
  }
  await appendEntries(tx, interview, after, now);
  interview.revision += 1;
  await saveInterview(tx, interview, now);
  if (outcome.end) await closeInterview(step);
  return recorded;
}

/** `POST /v1/participant/interview/answers`: an answer (or a correction) and the next snapshot. */
export function submitAnswer(deps: Deps) {
  return async (req: SubmitAnswerRequest): Promise<SubmitAnswerResponse> => {
    const interview = await runStep(deps, req.participant, async (step) => {
      requireInProgress(step.interview.status, step.interview.consented_at !== null);
      await recordAnswer(step, req.questionId, (req.answer ?? {}) as Record<string, unknown>);
      return step.interview;
    });
    return create(SubmitAnswerResponseSchema, { interview: snapshotOfRow(interview) });
  };
}
