import { Type } from "@sinclair/typebox";
import { pageOf } from "../../http/paging.js";
import type { RouteDeps } from "../deps.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, Page, PageQuery, ref, Uuid } from "../schemas.js";
import {
  EvaluationParams,
  evaluationRef,
  SeqPageQuery,
  SessionBody,
  sessionRequest,
  TAG,
} from "./requests.js";
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

  route(app, TAG, {
    method: "POST",
    url: "/evaluations",
    operationId: "createEvaluation",
    summary: "Create an evaluation",
    description:
      "Creates an evaluation of a subject on a bundle of this app, which must be published (409 " +
      "`bundle_not_published` otherwise); it counts against the `evaluations` quota. Requires " +
      "`evaluations:write` and an Idempotency-Key.",
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    params: EnvParams,
    body: Type.Object(
      { subject_id: Uuid, bundle_id: Uuid, program_id: Type.Optional(Uuid) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(Evaluation),
    responseDescription: "The evaluation, created (status `pending`).",
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

  route(app, TAG, {
    method: "GET",
    url: "/evaluations/:evaluation_id",
    operationId: "getEvaluation",
    summary: "Get an evaluation",
    description: "One evaluation of the environment, with its status. Requires `evaluations:read`.",
    access: { auth: "operator", scope: "evaluations:read" },
    params: EvaluationParams,
    response: ref(Evaluation),
    responseDescription: "The evaluation.",
    handler: async ({ request, call }) => {
      const answer = await evaluations.getEvaluation(evaluationRef(request.params), call);
      return evaluationJson(answer.evaluation);
    },
  });

  route(app, TAG, {
    method: "POST",
    url: "/evaluations/:evaluation_id/participant-sessions",
    operationId: "createParticipantSession",
    summary: "Start a participant session",
    description:
      "Issues a participant token bound to a new session of the evaluation, valid for `ttl_seconds` " +
      "(60-3600, 900 by default); the token is shown only in this answer. The session counts against " +
      "`active_participant_sessions` while it is unexpired and not completed. Requires " +
      "`evaluations:write` and an Idempotency-Key.",
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    params: EvaluationParams,
    // A JSON body is required, as FastAPI requires a body model: `{}` takes the default TTL.
    body: SessionBody(3600),
    status: 201,
    response: ref(ParticipantSession),
    responseDescription: "The session and its participant token.",
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await evaluations.createParticipantSession(sessionRequest(request), call);
      return participantSessionJson(answer);
    },
  });

  route(app, TAG, {
    method: "GET",
    url: "/evaluations/:evaluation_id/interview",
    operationId: "getEvaluationInterview",
    summary: "Get an evaluation's interview",
    description:
      "The operator's view of the evaluation's interview: its status, the entries after `after_seq` " +
      "(at most `limit`, with the `next_after_seq` to continue from) and its metrics. 404 `not_found` " +
      "before the participant has started. Requires `evaluations:read`.",
    access: { auth: "operator", scope: "evaluations:read" },
    params: EvaluationParams,
    querystring: SeqPageQuery,
    response: ref(EvaluationInterview),
    responseDescription: "The interview, a page of its entries, and its metrics.",
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

  route(app, TAG, {
    method: "GET",
    url: "/evaluations/:evaluation_id/behavioral-events",
    operationId: "listBehavioralEvents",
    summary: "List an evaluation's behavioral events",
    description:
      "The behavioral events its participant recorded, newest first, a page at a time (docs/paging.md); " +
      "privacy-minimized. Requires `evaluations:read`.",
    access: { auth: "operator", scope: "evaluations:read" },
    params: EvaluationParams,
    querystring: PageQuery,
    response: Page(BehavioralEvent, "BehavioralEventPage"),
    responseDescription: "A page of behavioral events.",
    handler: ({ request, call }) =>
      pageOf(
        request,
        deps.cursors,
        (page) => evaluations.listBehavioralEvents({ ...evaluationRef(request.params), page }, call),
        behavioralEventJson,
      ),
  });
}
