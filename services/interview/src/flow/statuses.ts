import { AppError } from "@evalp/kit";

/** The interface's operator statuses (part 3), stored on the interview. */
export type OperatorStatus = "active" | "paused" | "completed" | "ended_incomplete";

/** The participant statuses of docs/interview.md. */
export type ParticipantStatus = "not_started" | "in_progress" | "paused" | "completed" | "ended";

/** What the participant sees of an operator status: `not_started` until consent. */
export function participantStatus(status: OperatorStatus, consented: boolean): ParticipantStatus {
  switch (status) {
    case "completed":
      return "completed";
    case "ended_incomplete":
      return "ended";
    case "paused":
      return "paused";
    case "active":
      return consented ? "in_progress" : "not_started";
  }
}

/** The participant statuses reachable from each (docs/interview.md; pause and resume belong to docs/interview.md#the-agent-protocol). */
const REACHABLE: Record<ParticipantStatus, ParticipantStatus[]> = {
  not_started: ["in_progress"],
  in_progress: ["paused", "completed", "ended"],
  paused: ["in_progress", "ended"],
  completed: [],
  ended: [],
};

/**
 * 409 `invalid_transition` for a step the interview's status does not allow (docs/errors.md):
 * `from`, `to`, `allowed` (the statuses reachable from `from`), and a `reason` naming the rule.
 */
export function invalidTransition(
  from: ParticipantStatus,
  to: ParticipantStatus,
  reason: string,
  extra: Record<string, unknown> = {},
): AppError {
  const allowed = REACHABLE[from].filter(
    (status) => !(reason === "not_ready_to_finish" && status === "completed"),
  );
  const messages: Record<string, string> = {
    consent_required: "The participant has not consented yet.",
    interview_over: `The interview is ${from}.`,
    not_ready_to_finish: "Required questions are still unanswered.",
  };
  return new AppError("invalid_transition", messages[reason] ?? `Cannot go from ${from} to ${to}.`, {
    from,
    to,
    allowed,
    reason,
    ...extra,
  });
}

/** Steps that change the interview need it active (not over) and consented. */
export function requireInProgress(
  status: OperatorStatus,
  consented: boolean,
  to: ParticipantStatus = "in_progress",
) {
  const current = participantStatus(status, consented);
  if (current === "completed" || current === "ended") throw invalidTransition(current, to, "interview_over");
  if (current === "not_started") throw invalidTransition(current, to, "consent_required");
}
