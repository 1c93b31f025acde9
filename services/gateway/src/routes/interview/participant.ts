import type { JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { route } from "../index.js";
import { DateTime, ref } from "../wire.js";
import type { InterviewApi } from "./index.js";
import { INTERVIEW_STEP, STEP, step, TRANSCRIPT_READ } from "./steps.js";
import { connectionJson, interviewJson, Name, participantRef, seqPage, transcriptPageJson } from "./wire.js";
import { BehavioralEventReceipt, InterviewStart } from "./wire-schemas.js";

/** The participant's read: its token only. */
const PARTICIPANT = { auth: "participant" } as const;

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
export function participantRoutes(app: InterviewApi<"/v1/participant">, deps: RouteDeps): void {
  const participant = deps.upstreams.interview.participant;

  route(app, "startInterview", "POST /interview/start", STEP, {
    answer: ref(InterviewStart),
    handler: async ({ request, call }) => {
      const answer = await participant.startInterview({ participant: participantRef(request) }, call);
      return { connection: connectionJson(answer.connection), interview: interviewJson(answer.interview) };
    },
  });

  route(app, "consentToInterview", "POST /interview/consent", STEP, {
    ...INTERVIEW_STEP,
    body: Type.Object({ consented: Type.Literal(true) }, { additionalProperties: false }),
    handler: async ({ request, call }) =>
      step(deps.hub, request, await participant.consent({ participant: participantRef(request) }, call)),
  });

  route(app, "submitAnswer", "POST /interview/answers", STEP, {
    ...INTERVIEW_STEP,
    body: Type.Object(
      // Any JSON object: the interview plane checks it against the question's input.
      { question_id: Name, answer: Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown())) },
      { additionalProperties: false },
    ),
    handler: async ({ request, call }) =>
      step(
        deps.hub,
        request,
        await participant.submitAnswer(
          {
            participant: participantRef(request),
            questionId: request.body.question_id,
            answer: request.body.answer,
          },
          call,
        ),
      ),
  });

  route(app, "finishInterview", "POST /interview/finish", STEP, {
    ...INTERVIEW_STEP,
    handler: async ({ request, call }) =>
      step(
        deps.hub,
        request,
        await participant.finishInterview({ participant: participantRef(request) }, call),
      ),
  });

  route(app, "recordBehavioralEvents", "POST /interview/events", STEP, {
    body: Type.Object(
      { events: Type.Array(BehavioralEventIn, { minItems: 1 }) },
      { additionalProperties: false },
    ),
    answer: ref(BehavioralEventReceipt),
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

  route(app, "getTranscript", "GET /interview/transcript", PARTICIPANT, {
    ...TRANSCRIPT_READ,
    rpc: (request, call) =>
      participant.getTranscript({ participant: participantRef(request), ...seqPage(request.query) }, call),
    json: transcriptPageJson,
  });
}
