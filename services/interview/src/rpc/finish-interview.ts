import { create } from "@bufbuild/protobuf";
import {
  type FinishInterviewRequest,
  type FinishInterviewResponse,
  FinishInterviewResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { appendEntries } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { invalidTransition, requireInProgress } from "../flow/statuses.js";
import { closeInterview, runStep, snapshotOfRow } from "../steps.js";

/**
 * `POST /v1/participant/interview/finish`: completes the interview once it is ready to finish
 * (every applicable required question answered), else 409 `invalid_transition` with the
 * questions still `missing`. Emits `interview.completed`.
 */
export function finishInterview(deps: Deps) {
  return async (req: FinishInterviewRequest): Promise<FinishInterviewResponse> => {
    const interview = await runStep(deps, req.participant, async (step) => {
      const { tx, interview, flow, now } = step;
      requireInProgress(interview.status, interview.consented_at !== null, "completed");
      const missing = flow.progress(interview.answers).missing;
      if (missing.length > 0) {
        throw invalidTransition("in_progress", "completed", "not_ready_to_finish", {
          missing: missing.map((placed) => placed.question.id),
        });
      }
      interview.status = "completed";
      interview.completed_at = now;
      interview.current_question_id = null;
      await appendEntries(
        tx,
        interview,
        [{ kind: "status_changed", actor: "participant", payload: { from: "active", to: "completed" } }],
        now,
      );
      interview.revision += 1;
      await saveInterview(tx, interview, now);
      await closeInterview(step);
      return interview;
    });
    return create(FinishInterviewResponseSchema, { interview: snapshotOfRow(interview) });
  };
}
