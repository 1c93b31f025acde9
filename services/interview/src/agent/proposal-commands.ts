import { AppError, notFound, validationError } from "@evalp/kit";
import { appendEntries } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import type { EntryRow } from "../db/rows.js";
import type { PendingProposal } from "../flow/agent-state.js";
import { answerProblems } from "../flow/answers.js";
import { questionIdProblem, recordAnswer } from "../rpc/submit-answer.js";
import type { Step } from "../steps.js";
import type { Handler } from "./command.js";
import { attemptOf, entryById, fieldProblem, inProgress, questionOf, writeEntry } from "./command.js";
import { stableJson } from "./fingerprint.js";

/** The agent proposes an answer for the participant to confirm or reject; one waits at a time. */
export const propose: Handler = async (step, c) => {
  inProgress(step);
  const { interview, flow } = step;
  const questionId = String(c.question_id);
  const answer = c.proposed_answer as Record<string, unknown>;
  const confirmationText = String(c.confirmation_text);
  const pending = interview.agent.proposal;
  if (pending) {
    const same =
      pending.question_id === questionId &&
      stableJson(pending.proposed_answer) === stableJson(answer) &&
      pending.confirmation_text === confirmationText;
    // Re-proposing the same content returns it, whatever `expected_revision` says.
    if (same) return entryById(step, pending.id);
    throw new AppError("proposal_pending", "Another proposal is waiting for the participant.", {
      proposal_id: pending.id,
    });
  }
  if (c.expected_revision !== interview.revision) {
    throw new AppError("revision_conflict", "The interview has moved on since that revision.", {
      expected_revision: c.expected_revision,
      current_revision: interview.revision,
    });
  }
  const placed = questionOf(step, questionId);
  if (flow.skipped(interview.answers).has(questionId)) {
    throw questionIdProblem(questionId, "is skipped by the adaptive policy");
  }
  if (confirmationText.trim() === "") {
    throw fieldProblem("confirmation_text", confirmationText, "must not be blank");
  }
  const problems = answerProblems(placed.question, answer).map((item) => ({
    ...item,
    loc: ["body", "proposed_answer", ...item.loc.slice(2)],
  }));
  if (problems.length > 0) throw validationError(problems);
  const [entry] = await appendEntries(
    step.tx,
    interview,
    [
      {
        kind: "proposal",
        actor: "agent",
        questionId,
        sectionId: placed.section.id,
        attempt: attemptOf(step, questionId),
        payload: {
          speaker: "agent",
          text: confirmationText,
          proposed_answer: answer,
          confirmation_text: confirmationText,
          expected_revision: c.expected_revision,
        },
      },
    ],
    step.now,
  );
  if (!entry) throw new Error("the proposal entry was not written");
  const proposal: PendingProposal = {
    id: entry.id,
    seq: Number(entry.seq),
    question_id: questionId,
    proposed_answer: answer,
    confirmation_text: confirmationText,
    created_at: step.now.toISOString(),
  };
  interview.agent = { ...interview.agent, proposal };
  interview.revision += 1;
  await saveInterview(step.tx, interview, step.now);
  return entry;
};

/** The pending proposal named by id, else 404 `not_found` (resource `proposal`). */
export function pendingProposal(step: Step, proposalId: string): PendingProposal {
  const proposal = step.interview.agent.proposal;
  if (!proposal || proposal.id !== proposalId) throw notFound("proposal");
  return proposal;
}

/**
 * Confirm (→ `answer_recorded`/`answer_corrected`, ref = the proposal) or reject (→
 * `proposal_rejected`, the question's `attempt` + 1) the pending proposal.
 */
export async function decide(
  step: Step,
  proposal: PendingProposal,
  decision: "confirm" | "reject",
  payload: Record<string, unknown>,
): Promise<EntryRow> {
  const { interview } = step;
  if (decision === "confirm") {
    return recordAnswer(step, proposal.question_id, proposal.proposed_answer, {
      refEntryId: proposal.id,
      payload: { proposal_id: proposal.id, ...payload },
    });
  }
  const placed = step.flow.find(proposal.question_id);
  const rejections = (interview.agent.rejections?.[proposal.question_id] ?? 0) + 1;
  const written = await writeEntry(
    step,
    {
      kind: "proposal_rejected",
      actor: "participant",
      questionId: proposal.question_id,
      sectionId: placed?.section.id,
      attempt: attemptOf(step, proposal.question_id) + 1,
      refEntryId: proposal.id,
      payload: { proposal_id: proposal.id, ...payload },
    },
    false,
  );
  interview.agent = {
    ...interview.agent,
    proposal: null,
    rejections: { ...interview.agent.rejections, [proposal.question_id]: rejections },
  };
  interview.revision += 1;
  await saveInterview(step.tx, interview, step.now);
  if (!written) throw new Error("the rejection entry was not written");
  return written;
}

/** The agent settles the pending proposal by voice, citing what the participant said after it. */
export const resolve: Handler = async (step, c) => {
  inProgress(step);
  const proposal = pendingProposal(step, String(c.proposal_id));
  const refuse = (reason: string, message: string) =>
    new AppError("resolve_not_allowed", message, { reason, proposal_id: proposal.id });
  if (step.flow.components.experience.require_tap_confirmation === true) {
    throw refuse("tap_confirmation_required", "This interview takes only the participant's tap.");
  }
  const evidence = await entryById(step, String(c.evidence_entry_id));
  if (evidence.kind !== "utterance" || evidence.payload.speaker !== "participant") {
    throw refuse("evidence_not_participant_utterance", "The evidence is not a participant utterance.");
  }
  if (Number(evidence.seq) <= proposal.seq) {
    throw refuse("evidence_before_proposal", "The evidence was said before the proposal.");
  }
  const decision = c.decision === "confirm" ? "confirm" : "reject";
  return decide(step, proposal, decision, { via: "voice", evidence_entry_id: evidence.id });
};
