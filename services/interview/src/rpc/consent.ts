import { create } from "@bufbuild/protobuf";
import {
  type ConsentRequest,
  type ConsentResponse,
  ConsentResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { askNext } from "../ask-next.js";
import { appendEntries } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { invalidTransition, participantStatus } from "../flow/statuses.js";
import { runStep, snapshotOfRow } from "../steps.js";

/**
 * `POST /v1/participant/interview/consent`: records the consent and asks the first question
 * (status `in_progress`). Consenting again changes nothing and answers the same snapshot; an
 * interview that is over answers 409 `invalid_transition`.
 */
export function consent(deps: Deps) {
  return async (req: ConsentRequest): Promise<ConsentResponse> => {
    const interview = await runStep(deps, req.participant, async (step) => {
      const { tx, interview, now } = step;
      const status = participantStatus(interview.status, interview.consented_at !== null);
      if (status === "completed" || status === "ended")
        throw invalidTransition(status, "in_progress", "interview_over");
      if (interview.consented_at !== null) return interview;
      interview.consented_at = now;
      const entries = [
        { kind: "consent" as const, actor: "participant" as const, payload: { consented: true } },
        ...askNext(step),
      ];
      await appendEntries(tx, interview, entries, now);
      interview.revision += 1;
      await saveInterview(tx, interview, now);
      return interview;
    });
    return create(ConsentResponseSchema, { interview: snapshotOfRow(interview) });
  };
}
