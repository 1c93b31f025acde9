import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { DateTime, ref } from "../schemas.js";
import { Name, participantRef, SeqPageQuery, TAG } from "./requests.js";
import { BehavioralEventReceipt, InterviewStart, TranscriptPage } from "./resources.js";
import { interviewStep, STEP, STEP_ERRORS } from "./steps.js";
import { connectionJson, interviewJson, transcriptJson } from "./wire.js";

/** The participant's own event: `question_id` and `elapsed_ms` may be null or left out. */
const BehavioralEventIn = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    occurred_at: DateTime,
    question_id: Type.Optional(Type.Union([Name, Type.Null()])),
    elapsed_ms: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 86_400_000 }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** `/v1/participant/interview/*` (docs/interview.md): start, consent, answers, finish, events, transcript. */
export function participantRoutes(app: Api, deps: RouteDeps): void {
  const participant = deps.upstreams.interview.participant;

  route(app, TAG, {
    method: "POST",
    url: "/interview/start",
    operationId: "startInterview",
    summary: "Start or resume the interview",
    description:
      "Starts the participant's interview (the first call creates it) or resumes it: its state, and " +
      "a fresh connection token (at most 15 minutes) for the realtime door at `server_url`. Until " +
      "consent the status is `not_started`. An Idempotency-Key is honoured when sent.\n\n" +
      "The realtime door (`GET /v1/participant/realtime`) upgrades to a WebSocket opened with the " +
      "connection token, as `Authorization: Bearer` or the subprotocol `bearer.<token>`. The client " +
      'sends utterances `{"type":"utterance","modality":"voice"|"text","text","started_at",' +
      '"ended_at"?,"interrupted"?}`, each answered `{"type":"entry","entry"}`; agent turns arrive ' +
      'the same way, and each new revision of the interview as `{"type":"state","interview"}`. A bad ' +
      'or refused frame gets `{"type":"error","code","message","context"}` and the socket stays ' +
      "open; it closes (4401) when the connection token expires. Every frame is described in " +
      "`/asyncapi.json` (AsyncAPI 3).",
    access: STEP,
    response: ref(InterviewStart),
    responseDescription: "The interview and a connection for the realtime door.",
    errors: STEP_ERRORS,
    handler: async ({ request, call }) => {
      const answer = await participant.startInterview({ participant: participantRef(request) }, call);
      return { connection: connectionJson(answer.connection), interview: interviewJson(answer.interview) };
    },
  });

  interviewStep(app, deps.hub, {
    url: "/interview/consent",
    operationId: "consentToInterview",
    summary: "Consent to the interview",
    description:
      "Records the participant's consent: the interview is in progress and its first question is asked.",
    body: Type.Object({ consented: Type.Literal(true) }, { additionalProperties: false }),
    responseDescription: "The interview, in progress.",
    take: ({ request, call }) => participant.consent({ participant: participantRef(request) }, call),
  });

  interviewStep(app, deps.hub, {
    url: "/interview/answers",
    operationId: "submitAnswer",
    summary: "Answer a question",
    description:
      "Answers a question (an answered one again: a correction). The answer is checked against the " +
      "question's input (422). The interview moves on: the next question, progress, section counts " +
      "and `ready_to_finish` once every required question is answered.",
    body: Type.Object(
      // Any JSON object: the interview plane checks it against the question's input.
      { question_id: Name, answer: Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown())) },
      { additionalProperties: false },
    ),
    responseDescription: "The interview after the answer.",
    take: ({ request, call }) =>
      participant.submitAnswer(
        {
          participant: participantRef(request),
          questionId: request.body.question_id,
          answer: request.body.answer,
        },
        call,
      ),
  });

  interviewStep(app, deps.hub, {
    url: "/interview/finish",
    operationId: "finishInterview",
    summary: "Finish the interview",
    description:
      "Completes the interview once it is ready to finish (409 `invalid_transition` before) and " +
      "emits `interview.completed`.",
    responseDescription: "The interview, completed.",
    take: ({ request, call }) => participant.finishInterview({ participant: participantRef(request) }, call),
  });

  route(app, TAG, {
    method: "POST",
    url: "/interview/events",
    operationId: "recordBehavioralEvents",
    summary: "Record behavioral events",
    description:
      "Records the participant's behavioral events, at most the environment's " +
      "`behavioral_event_batch_size` at once (422 `batch_too_large` beyond). An Idempotency-Key is " +
      "honoured when sent.",
    access: STEP,
    body: Type.Object(
      { events: Type.Array(BehavioralEventIn, { minItems: 1 }) },
      { additionalProperties: false },
    ),
    status: 202,
    response: ref(BehavioralEventReceipt),
    responseDescription: "How many events were accepted.",
    errors: STEP_ERRORS,
    handler: async ({ request, call }) => {
      const answer = await participant.recordEvents(
        {
          participant: participantRef(request),
          events: request.body.events.map((event) => ({
            type: event.type,
            occurredAt: timestampFromDate(new Date(event.occurred_at)),
            questionId: event.question_id ?? undefined,
            elapsedMs: event.elapsed_ms ?? undefined,
          })),
        },
        call,
      );
      return { accepted: answer.accepted };
    },
  });

  route(app, TAG, {
    method: "GET",
    url: "/interview/transcript",
    operationId: "getTranscript",
    summary: "Read the transcript",
    description:
      "The transcript after `after_seq` (at most `limit` entries): every question asked, every " +
      "answer and every realtime utterance, with the `next_after_seq` to continue from.",
    access: { auth: "participant" },
    querystring: SeqPageQuery,
    response: ref(TranscriptPage),
    responseDescription: "A page of the transcript.",
    handler: async ({ request, call }) => {
      const answer = await participant.getTranscript(
        {
          participant: participantRef(request),
          afterSeq: BigInt(request.query.after_seq ?? 0),
          limit: request.query.limit ?? 100,
        },
        call,
      );
      return { items: answer.items.map(transcriptJson), next_after_seq: Number(answer.nextAfterSeq) };
    },
  });
}
