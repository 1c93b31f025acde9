import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { pageBody, pageRequest } from "../../http/paging.js";
import { iso } from "../../http/timestamps.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import {
  COMMON_ERRORS,
  DateTime,
  EnvParams,
  ErrorBody,
  IdempotentHeaders,
  Page,
  PageQuery,
  Uuid,
} from "../schemas.js";
import {
  EvaluationBody,
  evaluationJson,
  OperatorInterviewBody,
  operatorInterviewJson,
  SeqPageQuery,
} from "./views.js";

const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";
const EVALUATION = `${ENV}/evaluations/:evaluation_id`;
const EvaluationParams = Type.Composite([EnvParams, Type.Object({ evaluation_id: Type.String() })]);
type EvaluationPath = EnvPath & { evaluation_id: string };
const tags = ["interview"];

const BehavioralEventBody = Type.Object(
  {
    type: Type.String(),
    occurred_at: DateTime,
    question_id: Type.Union([Type.String(), Type.Null()]),
    elapsed_ms: Type.Union([Type.Number(), Type.Null()]),
  },
  { title: "BehavioralEvent" },
);

/**
 * Evaluations (create, get), participant sessions, #15 the operator view of the interview, and
 * the staff view of behavioral events. Scopes `evaluations:write` / `evaluations:read`.
 */
export function evaluationRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const evaluations = deps.upstreams.interview.evaluations;

  app.post(
    `${ENV}/evaluations`,
    {
      config: { access: { auth: "operator", scope: "evaluations:write", idempotency: "required" } },
      schema: {
        tags,
        summary: "Create an evaluation of a subject on a published bundle (counts against `evaluations`)",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { subject_id: Uuid, bundle_id: Uuid, program_id: Type.Optional(Uuid) },
          { additionalProperties: false },
        ),
        response: { 201: EvaluationBody, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as { subject_id: string; bundle_id: string; program_id?: string };
      const answer = await evaluations.createEvaluation(
        {
          environment: environmentRef(request.params as EnvPath),
          subjectId: body.subject_id,
          bundleId: body.bundle_id,
          programId: body.program_id,
        },
        callOptions(request),
      );
      return reply.code(201).send(evaluationJson(answer.evaluation));
    },
  );

  app.get(
    EVALUATION,
    {
      config: { access: { auth: "operator", scope: "evaluations:read" } },
      schema: {
        tags,
        summary: "Get an evaluation",
        params: EvaluationParams,
        response: { 200: EvaluationBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EvaluationPath;
      const answer = await evaluations.getEvaluation(
        { environment: environmentRef(params), evaluationId: params.evaluation_id },
        callOptions(request),
      );
      return evaluationJson(answer.evaluation);
    },
  );

  app.post(
    `${EVALUATION}/participant-sessions`,
    {
      config: { access: { auth: "operator", scope: "evaluations:write", idempotency: "required" } },
      schema: {
        tags,
        summary:
          "Issue a participant token bound to a new session (counts against `active_participant_sessions`)",
        params: EvaluationParams,
        headers: IdempotentHeaders,
        // A JSON body is required, as FastAPI requires a body model: `{}` takes the default TTL.
        body: Type.Object(
          { ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 3600, default: 900 })) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object(
            { session_id: Uuid, participant_token: Type.String(), expires_at: DateTime },
            { title: "ParticipantSession" },
          ),
          409: ErrorBody,
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const params = request.params as EvaluationPath;
      const body = request.body as { ttl_seconds?: number };
      const answer = await evaluations.createParticipantSession(
        {
          environment: environmentRef(params),
          evaluationId: params.evaluation_id,
          ttlSeconds: body.ttl_seconds ?? 900,
        },
        callOptions(request),
      );
      return reply.code(201).send({
        session_id: answer.sessionId,
        participant_token: answer.participantToken,
        expires_at: iso(answer.expiresAt),
      });
    },
  );

  app.get(
    `${EVALUATION}/interview`,
    {
      config: { access: { auth: "operator", scope: "evaluations:read" } },
      schema: {
        tags,
        summary: "#15 The evaluation's interview: a page of entries after `after_seq`, and its metrics",
        params: EvaluationParams,
        querystring: SeqPageQuery,
        response: { 200: OperatorInterviewBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EvaluationPath;
      const query = request.query as { after_seq?: number; limit?: number };
      const answer = await evaluations.getEvaluationInterview(
        {
          environment: environmentRef(params),
          evaluationId: params.evaluation_id,
          afterSeq: BigInt(query.after_seq ?? 0),
          limit: query.limit ?? 100,
        },
        callOptions(request),
      );
      return operatorInterviewJson(answer.interview);
    },
  );

  app.get(
    `${EVALUATION}/behavioral-events`,
    {
      config: { access: { auth: "operator", scope: "evaluations:read" } },
      schema: {
        tags,
        summary: "The evaluation's behavioral events, newest first (privacy-minimized)",
        params: EvaluationParams,
        querystring: PageQuery,
        response: { 200: Page(BehavioralEventBody, "BehavioralEventPage"), ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EvaluationPath;
      const page = pageRequest(request, deps.cursors, request.query as { limit?: number; cursor?: string });
      const answer = await evaluations.listBehavioralEvents(
        { environment: environmentRef(params), evaluationId: params.evaluation_id, page },
        callOptions(request),
      );
      const items = answer.items.map((event) => ({
        type: event.type,
        occurred_at: iso(event.occurredAt),
        question_id: event.questionId ?? null,
        elapsed_ms: event.elapsedMs ?? null,
      }));
      return pageBody(request, deps.cursors, items, answer.page);
    },
  );
}
