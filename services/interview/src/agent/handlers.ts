import { AppError, notFound } from "@evalp/kit";
import { appendEntries } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import type { EntryRow } from "../db/rows.js";
import { ENTRY_COLUMNS } from "../db/rows.js";
import { type PendingProposal, scenarioState } from "../flow/agent-state.js";
import { answerProblems } from "../flow/answers.js";
import { findScenario } from "../flow/snapshot.js";
import { invalidTransition, participantStatus, requireInProgress } from "../flow/statuses.js";
import { questionIdProblem, recordAnswer, validationError } from "../rpc/submit-answer.js";
import type { Step } from "../steps.js";
import { stableJson } from "./fingerprint.js";

/** A command as the gateway validated it: `{type, id, …}` (contract §9). */
export type Command = { type: string; id: string } & Record<string, unknown>;

/** What a command did: the entry it wrote (or returned again), if any. */
export type Handler = (step: Step, command: Command) => Promise<EntryRow | null>;

function inProgress(step: Step) {
  requireInProgress(step.interview.status, step.interview.consented_at !== null);
}

function fieldProblem(field: string, input: unknown, reason: string): AppError {
  const error = `${JSON.stringify(input)} ${reason}`;
  return validationError([
    { loc: ["body", field], type: "value_error", msg: `Value error, ${error}`, input, ctx: { error } },
  ]);
}

/** A question the command may name: one of the interview, not skipped now. */
function questionOf(step: Step, questionId: string, field = "question_id") {
  const placed = step.flow.find(questionId);
  if (!placed) {
    if (field === "question_id") throw questionIdProblem(questionId, "is not a question of this interview");
    throw fieldProblem(field, questionId, "is not a question of this interview");
  }
  return placed;
}

/**
 * An entry of this interview. Contract §9: another interview's resources answer 404, and so does
 * an id that names nothing (the two must not be told apart).
 */
async function entryById(step: Step, entryId: string): Promise<EntryRow> {
  const found = await step.tx.query<EntryRow>(
    `SELECT ${ENTRY_COLUMNS} FROM interview_entries WHERE interview_id = $1 AND id = $2`,
    [step.interview.id, entryId],
  );
  const entry = found.rows[0];
  if (!entry) throw notFound("entry", { entry_id: entryId });
  return entry;
}

/** Writes one entry and saves the interview (a new revision when `changes` the snapshot). */
async function write(step: Step, entry: Parameters<typeof appendEntries>[2][number], changes: boolean) {
  const [written] = await appendEntries(step.tx, step.interview, [entry], step.now);
  if (changes) step.interview.revision += 1;
  await saveInterview(step.tx, step.interview, step.now);
  return written ?? null;
}

function attemptOf(step: Step, questionId: string): number {
  const { interview } = step;
  return (interview.answers[questionId]?.attempts ?? 0) + (interview.agent.rejections?.[questionId] ?? 0);
}

const utterance: Handler = async (step, c) => {
  inProgress(step);
  const startedAt = new Date(String(c.started_at));
  return write(
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

const propose: Handler = async (step, c) => {
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
  const written = await write(
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

const resolve: Handler = async (step, c) => {
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

const clarify: Handler = async (step, c) => {
  inProgress(step);
  const placed = questionOf(step, String(c.question_id));
  return write(
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

const consistencyFollowUp: Handler = async (step, c) => {
  inProgress(step);
  const ids = c.question_ids as string[];
  ids.forEach((id, index) => {
    if (!step.flow.find(id))
      throw fieldProblem(`question_ids.${index}`, id, "is not a question of this interview");
  });
  return write(
    step,
    {
      kind: "clarification",
      actor: "agent",
      payload: { type: "consistency", question_ids: ids, speaker: "agent", text: c.text },
    },
    false,
  );
};

function scenarioOf(step: Step, scenarioId: string) {
  const found = findScenario(step.flow, scenarioId);
  if (!found) throw fieldProblem("scenario_id", scenarioId, "is not a scenario of this interview");
  return found;
}

function criterionOf(step: Step, scenarioId: string, criterionId: string) {
  const found = scenarioOf(step, scenarioId);
  if (!found.scenario.criteria.some((criterion) => criterion.id === criterionId)) {
    throw fieldProblem("criterion_id", criterionId, "is not a criterion of that scenario");
  }
  return found;
}

function cover(step: Step, scenarioId: string, criterionId: string) {
  const state = scenarioState(step.interview.agent, scenarioId);
  const covered = state.covered.includes(criterionId) ? state.covered : [...state.covered, criterionId];
  step.interview.agent = {
    ...step.interview.agent,
    scenarios: { ...step.interview.agent.scenarios, [scenarioId]: { ...state, covered } },
  };
}

const scenarioFollowUp: Handler = async (step, c) => {
  inProgress(step);
  const { scenario, section } = scenarioOf(step, String(c.scenario_id));
  const state = scenarioState(step.interview.agent, scenario.id);
  if (state.follow_ups >= scenario.max_follow_ups) {
    throw new AppError("follow_up_limit_reached", "This scenario has no follow-ups left.", {
      scenario_id: scenario.id,
      max_follow_ups: scenario.max_follow_ups,
      follow_ups_used: state.follow_ups,
    });
  }
  const used = state.follow_ups + 1;
  step.interview.agent = {
    ...step.interview.agent,
    scenarios: { ...step.interview.agent.scenarios, [scenario.id]: { ...state, follow_ups: used } },
  };
  return write(
    step,
    {
      kind: "scenario_follow_up",
      actor: "agent",
      scenarioId: scenario.id,
      sectionId: section.id,
      attempt: used,
      payload: { speaker: "agent", text: c.text, follow_ups_used: used },
    },
    true,
  );
};

const scenarioEvidence: Handler = async (step, c) => {
  inProgress(step);
  const scenarioId = String(c.scenario_id);
  const criterionId = String(c.criterion_id);
  const { section } = criterionOf(step, scenarioId, criterionId);
  const ids = c.entry_ids as string[];
  for (const id of ids) await entryById(step, id);
  cover(step, scenarioId, criterionId);
  return write(
    step,
    {
      kind: "scenario_evidence",
      actor: "agent",
      scenarioId,
      sectionId: section.id,
      payload: { criterion_id: criterionId, entry_ids: ids, summary: c.summary },
    },
    true,
  );
};

const scenarioGap: Handler = async (step, c) => {
  inProgress(step);
  const scenarioId = String(c.scenario_id);
  const criterionId = String(c.criterion_id);
  const { section } = criterionOf(step, scenarioId, criterionId);
  cover(step, scenarioId, criterionId);
  return write(
    step,
    {
      kind: "scenario_gap",
      actor: "agent",
      scenarioId,
      sectionId: section.id,
      payload: { criterion_id: criterionId, reason: c.reason },
    },
    true,
  );
};

/** Usage and provider errors are taken whatever the interview's status (a last report after the end). */
const report: Handler = async (step, c) =>
  write(
    step,
    {
      kind: "agent_report",
      actor: "agent",
      payload: { usage: c.usage ?? [], errors: c.errors ?? [], latency: c.latency ?? {} },
    },
    false,
  );

const pause: Handler = async (step, c) => {
  inProgress(step);
  const { interview } = step;
  const from = participantStatus(interview.status, true);
  if (from !== "in_progress") throw invalidTransition(from, "paused", "not_in_progress");
  interview.status = "paused";
  interview.paused_reason = String(c.reason);
  return write(
    step,
    { kind: "status_changed", actor: "agent", payload: { from: "active", to: "paused", reason: c.reason } },
    true,
  );
};

const resume: Handler = async (step, c) => {
  inProgress(step);
  const { interview } = step;
  const from = participantStatus(interview.status, true);
  if (from !== "paused") throw invalidTransition(from, "in_progress", "not_paused");
  interview.status = "active";
  interview.paused_reason = null;
  return write(
    step,
    { kind: "status_changed", actor: "agent", payload: { from: "paused", to: "active", reason: c.reason } },
    true,
  );
};

/** Every command of contract §9's table. */
export const HANDLERS: Record<string, Handler> = {
  utterance,
  propose,
  resolve,
  clarify,
  consistency_follow_up: consistencyFollowUp,
  scenario_follow_up: scenarioFollowUp,
  scenario_evidence: scenarioEvidence,
  scenario_gap: scenarioGap,
  report,
  pause,
  resume,
};
