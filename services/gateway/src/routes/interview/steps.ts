import type { Snapshot } from "@evalp/proto/interview/v1/interview";
import type { FastifyRequest } from "fastify";
import type { InterviewHub } from "../../realtime/hub.js";
import { ref } from "../wire.js";
import { interviewJson, participantRef, SeqPageQuery } from "./wire.js";
import { InterviewState, TranscriptPage } from "./wire-schemas.js";

/**
 * Participant POSTs honour an Idempotency-Key when sent, scoped to the session (docs/idempotency.md).
 * A step out of turn is 409 (each step's prose says so).
 */
export const STEP = { auth: "participant", idempotency: "optional" } as const;

/**
 * What every step of the participant's interview (consent, an answer, finish, a proposal's
 * decision), a POST with the access `STEP`, declares: it is answered `{"interview"}` (its handler
 * is a `step`).
 */
export const INTERVIEW_STEP = { answer: ref(InterviewState) } as const;

/**
 * What the participant's and the agent's transcript reads (`GET /interview/transcript`) declare:
 * the transcript paged by sequence number (`SeqPageQuery`); each route gives its access and the
 * RPC of its side, whose answer `transcriptPageJson` maps.
 */
export const TRANSCRIPT_READ = {
  query: SeqPageQuery,
  answer: ref(TranscriptPage),
} as const;

/**
 * An interview step's answer: `taken`, the interview plane's answer with the interview after it,
 * which is pushed to the interview's sockets when its revision changed
 * (docs/interview.md#the-agent-protocol).
 */
export function step(hub: InterviewHub, request: FastifyRequest, taken: { interview?: Snapshot }) {
  const interview = interviewJson(taken.interview);
  hub.deliverState(participantRef(request).evaluationId, interview);
  return { interview };
}
