import {
  invalidTransition,
  type OperatorStatus,
  type ParticipantStatus,
  participantStatus,
} from "../flow/statuses.js";
import type { Handler } from "./command.js";
import { inProgress, writeEntry } from "./command.js";

/** A move between in progress and paused: what it needs and its 409 reason (participant terms), what it stores. */
type Move = { requires: ParticipantStatus; to: ParticipantStatus; refusal: string; status: OperatorStatus };

/** Pause and resume (docs/interview.md#the-agent-protocol): only the agent moves an interview between the two. */
function statusCommand(move: Move): Handler {
  return async (step, c) => {
    inProgress(step);
    const { interview } = step;
    const current = participantStatus(interview.status, true);
    if (current !== move.requires) throw invalidTransition(current, move.to, move.refusal);
    const from = interview.status;
    interview.status = move.status;
    interview.paused_reason = move.status === "paused" ? String(c.reason) : null;
    return writeEntry(
      step,
      { kind: "status_changed", actor: "agent", payload: { from, to: move.status, reason: c.reason } },
      true,
    );
  };
}

export const pause = statusCommand({
  requires: "in_progress",
  to: "paused",
  refusal: "not_in_progress",
  status: "paused",
});

export const resume = statusCommand({
  requires: "paused",
  to: "in_progress",
  refusal: "not_paused",
  status: "active",
});
