import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { AppError } from "@evalp/kit";
import {
  type RecordUtteranceRequest,
  type RecordUtteranceResponse,
  RecordUtteranceResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { appendEntries } from "../db/entries.js";
import { saveInterview } from "../db/interviews.js";
import { transcriptMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { requireInProgress } from "../flow/statuses.js";
import { runStep } from "../steps.js";

/**
 * A participant's utterance from the realtime door, as an `utterance` entry (speaker
 * `participant`, the modality it was sent with). The participant's client does the speech
 * recognition: the platform stores and serves the text. It needs consent and an interview that
 * is not over, and a voice utterance no agent socket open (409 `agent_owns_voice`); it changes no
 * snapshot, so the revision stays.
 */
export function recordUtterance(deps: Deps) {
  return async (req: RecordUtteranceRequest): Promise<RecordUtteranceResponse> => {
    const entry = await runStep(deps, req.participant, async ({ tx, interview, now }) => {
      requireInProgress(interview.status, interview.consented_at !== null);
      // docs/interview.md#the-agent-protocol: while an agent socket is open (on any gateway), the agent alone writes voice.
      if (req.modality === "voice" && interview.agent.connected === true) {
        throw new AppError("agent_owns_voice", "An agent is connected: it alone writes voice utterances.");
      }
      const startedAt = req.startedAt ? timestampDate(req.startedAt) : now;
      const endedAt = req.endedAt ? timestampDate(req.endedAt) : null;
      const [written] = await appendEntries(
        tx,
        interview,
        [
          {
            kind: "utterance",
            actor: "participant",
            occurredAt: startedAt,
            questionId: interview.current_question_id ?? undefined,
            payload: {
              speaker: "participant",
              modality: req.modality,
              text: req.text,
              started_at: startedAt.toISOString(),
              ...(endedAt ? { ended_at: endedAt.toISOString() } : {}),
              interrupted: req.interrupted,
            },
          },
        ],
        now,
      );
      await saveInterview(tx, interview, now);
      return written;
    });
    if (!entry) throw new Error("the utterance entry was not written");
    return create(RecordUtteranceResponseSchema, { entry: transcriptMessage(entry) });
  };
}
