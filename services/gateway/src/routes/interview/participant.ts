import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Snapshot } from "@evalp/proto/interview/v1/interview";
import type { ParticipantRef } from "@evalp/proto/interview/v1/participant";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { callOptions } from "../../http/call.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import { DateTime, ErrorBody, OptionalIdempotencyHeaders, ValidationErrorBody } from "../schemas.js";
import {
  SeqPageQuery,
  SnapshotBody,
  SnapshotEnvelope,
  snapshotJson,
  TranscriptEntryBody,
  transcriptJson,
} from "./views.js";

const INTERVIEW = "/v1/participant/interview";
const tags = ["participant"];
/** Participant POSTs honour an Idempotency-Key when sent, scoped to the session (contract §4). */
const STEP = { access: { auth: "participant", idempotency: "optional" } } as const;
const ERRORS = {
  401: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  422: Type.Union([ValidationErrorBody, ErrorBody]),
  429: ErrorBody,
  503: ErrorBody,
};

/** The session the request's verified participant token is bound to. */
export function participantRef(request: FastifyRequest): ParticipantRef {
  const participant = request.participant;
  if (!participant) throw new Error("participant route without a verified participant");
  return { sessionId: participant.sessionId, evaluationId: participant.evaluationId } as ParticipantRef;
}

/** The participant's own event: `question_id` and `elapsed_ms` may be null or left out. */
const BehavioralEventIn = Type.Object(
  {
    type: Type.String({ minLength: 1, maxLength: 64 }),
    occurred_at: DateTime,
    question_id: Type.Optional(Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Null()])),
    elapsed_ms: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 86_400_000 }), Type.Null()])),
  },
  { additionalProperties: false },
);

/** #17 start, consent, answers, finish, behavioral events and #16 the transcript. */
export function participantRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const participant = deps.upstreams.interview.participant;
  /** A step's snapshot, pushed to the interview's sockets when its revision changed (contract §9). */
  const published = (request: FastifyRequest, snapshot: Snapshot | undefined) => {
    const interview = snapshotJson(snapshot);
    deps.hub.deliverState(participantRef(request).evaluationId, interview);
    return { interview };
  };

  app.post(
    `${INTERVIEW}/start`,
    {
      config: STEP,
      schema: {
        tags,
        summary: "#17 Start (or resume) the interview: its snapshot and a connection for the realtime door",
        headers: OptionalIdempotencyHeaders,
        response: {
          200: Type.Object(
            {
              connection: Type.Object({
                participant_token: Type.String(),
                server_url: Type.String(),
                expires_at: DateTime,
              }),
              interview: SnapshotBody,
            },
            { title: "ParticipantInterviewStart" },
          ),
          ...ERRORS,
        },
      },
    },
    async (request) => {
      const answer = await participant.startInterview(
        { participant: participantRef(request) },
        callOptions(request),
      );
      const connection = answer.connection;
      if (!connection) throw new Error("upstream returned no connection");
      return {
        connection: {
          participant_token: connection.participantToken,
          server_url: connection.serverUrl,
          expires_at: iso(connection.expiresAt),
        },
        interview: snapshotJson(answer.interview),
      };
    },
  );

  app.post(
    `${INTERVIEW}/consent`,
    {
      config: STEP,
      schema: {
        tags,
        summary: "Consent: the interview is in progress and the first question is asked",
        headers: OptionalIdempotencyHeaders,
        body: Type.Object({ consented: Type.Literal(true) }, { additionalProperties: false }),
        response: { 200: SnapshotEnvelope, ...ERRORS },
      },
    },
    async (request) => {
      const answer = await participant.consent(
        { participant: participantRef(request) },
        callOptions(request),
      );
      return published(request, answer.interview);
    },
  );

  app.post(
    `${INTERVIEW}/answers`,
    {
      config: STEP,
      schema: {
        tags,
        summary: "Answer a question (again: a correction); the next question, progress and what is missing",
        headers: OptionalIdempotencyHeaders,
        body: Type.Object(
          {
            question_id: Type.String({ minLength: 1, maxLength: 255 }),
            answer: Type.Record(Type.String(), Type.Unknown()),
          },
          { additionalProperties: false },
        ),
        response: { 200: SnapshotEnvelope, ...ERRORS },
      },
    },
    async (request) => {
      const body = request.body as { question_id: string; answer: Record<string, never> };
      const answer = await participant.submitAnswer(
        { participant: participantRef(request), questionId: body.question_id, answer: body.answer },
        callOptions(request),
      );
      return published(request, answer.interview);
    },
  );

  app.post(
    `${INTERVIEW}/finish`,
    {
      config: STEP,
      schema: {
        tags,
        summary: "Finish the interview once it is ready to finish (409 invalid_transition before)",
        headers: OptionalIdempotencyHeaders,
        response: { 200: SnapshotEnvelope, ...ERRORS },
      },
    },
    async (request) => {
      const answer = await participant.finishInterview(
        { participant: participantRef(request) },
        callOptions(request),
      );
      return published(request, answer.interview);
    },
  );

  app.post(
    `${INTERVIEW}/events`,
    {
      config: STEP,
      schema: {
        tags,
        summary: "Record behavioral events (at most the environment's behavioral_event_batch_size)",
        headers: OptionalIdempotencyHeaders,
        body: Type.Object(
          { events: Type.Array(BehavioralEventIn, { minItems: 1 }) },
          { additionalProperties: false },
        ),
        response: {
          202: Type.Object({ accepted: Type.Integer() }, { title: "BehavioralEventReceipt" }),
          ...ERRORS,
        },
      },
    },
    async (request, reply) => {
      const body = request.body as {
        events: {
          type: string;
          occurred_at: string;
          question_id?: string | null;
          elapsed_ms?: number | null;
        }[];
      };
      const answer = await participant.recordEvents(
        {
          participant: participantRef(request),
          events: body.events.map((event) => ({
            type: event.type,
            occurredAt: timestampFromDate(new Date(event.occurred_at)),
            questionId: event.question_id ?? undefined,
            elapsedMs: event.elapsed_ms ?? undefined,
          })),
        },
        callOptions(request),
      );
      return reply.code(202).send({ accepted: answer.accepted });
    },
  );

  app.get(
    `${INTERVIEW}/transcript`,
    {
      config: { access: { auth: "participant" } },
      schema: {
        tags,
        summary: "#16 The transcript after `after_seq`: questions, answers and utterances",
        querystring: SeqPageQuery,
        response: {
          200: Type.Object(
            { items: Type.Array(TranscriptEntryBody), next_after_seq: Type.Integer() },
            { title: "TranscriptPage" },
          ),
          ...ERRORS,
        },
      },
    },
    async (request) => {
      const query = request.query as { after_seq?: number; limit?: number };
      const answer = await participant.getTranscript(
        {
          participant: participantRef(request),
          afterSeq: BigInt(query.after_seq ?? 0),
          limit: query.limit ?? 100,
        },
        callOptions(request),
      );
      return { items: answer.items.map(transcriptJson), next_after_seq: Number(answer.nextAfterSeq) };
    },
  );
}
