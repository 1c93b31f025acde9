import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, Page, PageQuery, ref, Uuid } from "../schemas.js";
import { INTERVIEW } from "./plane.js";
import { EvaluationParams, evaluationRef, SeqPageQuery, SessionBody, sessionRequest } from "./requests.js";
import { BehavioralEvent, Evaluation, EvaluationInterview, ParticipantSession } from "./resources.js";
import {
  behavioralEventJson,
  evaluationJson,
  operatorInterviewJson,
  participantSessionJson,
} from "./wire.js";

/**
 * `ENV/evaluations` (docs/interview.md): evaluations, their participant sessions, the operator's view
 * of their interview and their behavioral events. Scopes `evaluations:write` / `evaluations:read`.
 */
export function evaluationRoutes(app: Api, deps: RouteDeps): void {
  const evaluations = deps.upstreams.interview.evaluations;

  route(app, INTERVIEW, {
    at: "POST /evaluations",
    operationId: "createEvaluation",
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    params: EnvParams,
    body: Type.Object(
      { subject_id: Uuid, bundle_id: Uuid, program_id: Type.Optional(Uuid) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(Evaluation),
    errors: [409],
    handler: async ({ request, call }) => {
      const { body } = request;
      const answer = await evaluations.createEvaluation(
        {
          environment: environmentRef(request.params),
          subjectId: body.subject_id,
          bundleId: body.bundle_id,
          programId: body.program_id,
        },
        call,
      );
      return evaluationJson(answer.evaluation);
    },
  });

  route(app, INTERVIEW, {
    at: "GET /evaluations/:evaluation_id",
    operationId: "getEvaluation",
    access: { auth: "operator", scope: "evaluations:read" },
    params: EvaluationParams,
    response: ref(Evaluation),
    handler: async ({ request, call }) => {
      const answer = await evaluations.getEvaluation(evaluationRef(request.params), call);
      return evaluationJson(answer.evaluation);
    },
  });

  route(app, INTERVIEW, {
    at: "POST /evaluations/:evaluation_id/participant-sessions",
    operationId: "createParticipantSession",
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    params: EvaluationParams,
    // A JSON body is required, as FastAPI requires a body model: `{}` takes the default TTL.
    body: SessionBody(3600),
    status: 201,
    response: ref(ParticipantSession),
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await evaluations.createParticipantSession(sessionRequest(request), call);
      return participantSessionJson(answer);
    },
  });

  route(app, INTERVIEW, {
    at: "GET /evaluations/:evaluation_id/interview",
    operationId: "getEvaluationInterview",
    access: { auth: "operator", scope: "evaluations:read" },
    params: EvaluationParams,
    querystring: SeqPageQuery,
    response: ref(EvaluationInterview),
    handler: async ({ request, call }) => {
      const answer = await evaluations.getEvaluationInterview(
        {
          ...evaluationRef(request.params),
          afterSeq: BigInt(request.query.after_seq ?? 0),
          limit: request.query.limit ?? 100,
        },
        call,
      );
      return operatorInterviewJson(answer.interview);
    },
  });

  route(app, INTERVIEW, {
    at: "GET /evaluations/:evaluation_id/behavioral-events",
    operationId: "listBehavioralEvents",
    access: { auth: "operator", scope: "evaluations:read" },
    params: EvaluationParams,
    querystring: PageQuery,
    response: Page(BehavioralEvent, "BehavioralEventPage"),
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => evaluations.listBehavioralEvents({ ...evaluationRef(request.params), page }, call),
        behavioralEventJson,
      ),
  });
}
