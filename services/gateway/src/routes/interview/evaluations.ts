import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import type { ENV_PREFIX } from "../environment.js";
import { environmentRef } from "../environment.js";
import { resources } from "../resource.js";
import { type Api, route } from "../route.js";
import { DateTime, ref, Uuid } from "../schemas.js";
import { INTERVIEW } from "./plane.js";
import { evaluationRef, SeqPageQuery, SessionBody, sessionRequest } from "./requests.js";
import {
  evaluationJson,
  listedEvaluationJson,
  operatorInterviewJson,
  participantSessionJson,
  resultJson,
} from "./wire.js";
import {
  BehavioralEvent,
  EVALUATION_STATUSES,
  Evaluation,
  EvaluationInterview,
  EvaluationResult,
  EvaluationResultList,
  ListedEvaluation,
  ParticipantSession,
} from "./wire-schemas.js";

/**
 * `ENV/evaluations` (docs/interview.md): evaluations, their participant sessions, the operator's view
 * of their interview and their behavioral events. Scopes `evaluations:write` / `evaluations:read`.
 */
export function evaluationRoutes(app: Api<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const evaluations = deps.upstreams.interview.evaluations;
  const { filteredList, list, read } = resources(app, INTERVIEW, deps.cursors);

  filteredList(
    "listEvaluations",
    "GET /evaluations",
    "evaluations:read",
    { item: ListedEvaluation, filters: EvaluationFilters, json: listedEvaluationJson },
    ({ params, query }, page, call) =>
      evaluations.listEvaluations(
        {
          environment: environmentRef(params),
          page,
          status: query.status,
          subjectId: query.subject_id,
          bundleId: query.bundle_id,
          programId: query.program_id,
          createdAfter: query.created_after ? timestampFromDate(new Date(query.created_after)) : undefined,
          createdBefore: query.created_before ? timestampFromDate(new Date(query.created_before)) : undefined,
        },
        call,
      ),
  );

  route(app, INTERVIEW, "createEvaluation", "POST /evaluations", {
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    body: Type.Object(
      { subject_id: Uuid, bundle_id: Uuid, program_id: Type.Optional(Uuid) },
      { additionalProperties: false },
    ),
    status: 201,
    response: ref(Evaluation),
    errors: [409],
    rpc: ({ params, body }, call) =>
      evaluations.createEvaluation(
        {
          environment: environmentRef(params),
          subjectId: body.subject_id,
          bundleId: body.bundle_id,
          programId: body.program_id,
        },
        call,
      ),
    json: (answer) => evaluationJson(answer.evaluation),
  });

  read("getEvaluation", "GET /evaluations/:evaluation_id", "evaluations:read", Evaluation, {
    rpc: ({ params }, call) => evaluations.getEvaluation(evaluationRef(params), call),
    json: (answer) => evaluationJson(answer.evaluation),
  });

  route(app, INTERVIEW, "createParticipantSession", "POST /evaluations/:evaluation_id/participant-sessions", {
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    // A JSON body is required, as FastAPI requires a body model: `{}` takes the default TTL.
    body: SessionBody(3600),
    status: 201,
    response: ref(ParticipantSession),
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await evaluations.createParticipantSession(sessionRequest(request), call);
      // The sockets of the sessions it superseded: those held here at once, the other gateways'
      // when the interview plane's `revoked` frame reaches them.
      deps.hub.revokeParticipants(request.params.evaluation_id, answer.revokedSessionIds, "superseded");
      const session = participantSessionJson(answer);
      return { ...session, url: interviewPageUrl(deps.config.PUBLIC_URL, session.participant_token) };
    },
  });

  route(
    app,
    INTERVIEW,
    "revokeParticipantSession",
    "DELETE /evaluations/:evaluation_id/participant-sessions/:session_id",
    {
      access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
      status: 204,
      handler: async ({ request, call }) => {
        const { params } = request;
        await evaluations.revokeParticipantSession(
          { ...evaluationRef(params), sessionId: params.session_id },
          call,
        );
        deps.hub.revokeParticipants(params.evaluation_id, [params.session_id], "revoked");
        return undefined;
      },
    },
  );

  route(app, INTERVIEW, "getEvaluationInterview", "GET /evaluations/:evaluation_id/interview", {
    access: { auth: "operator", scope: "evaluations:read" },
    querystring: SeqPageQuery,
    response: ref(EvaluationInterview),
    rpc: ({ params, query }, call) =>
      evaluations.getEvaluationInterview(
        { ...evaluationRef(params), afterSeq: BigInt(query.after_seq ?? 0), limit: query.limit ?? 100 },
        call,
      ),
    json: (answer) => operatorInterviewJson(answer.interview),
  });

  list(
    "listBehavioralEvents",
    "GET /evaluations/:evaluation_id/behavioral-events",
    "evaluations:read",
    BehavioralEvent,
    ({ params }, page, call) => evaluations.listBehavioralEvents({ ...evaluationRef(params), page }, call),
  );
}

/** The filters of `GET ENV/evaluations` (docs/results.md#listing-evaluations), each optional. */
const EvaluationFilters = {
  status: Type.Optional(StringEnum(EVALUATION_STATUSES)),
  subject_id: Type.Optional(Uuid),
  bundle_id: Type.Optional(Uuid),
  program_id: Type.Optional(Uuid),
  created_after: Type.Optional(DateTime),
  created_before: Type.Optional(DateTime),
};

/**
 * The verdicts (docs/results.md): an evaluation's latest result, all of them, and a rescore
 * against another published bundle. Scopes `evaluations:read` / `evaluations:write`.
 */
export function resultRoutes(app: Api<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const evaluations = deps.upstreams.interview.evaluations;
  const { read } = resources(app, INTERVIEW, deps.cursors);

  route(app, INTERVIEW, "getEvaluationResult", "GET /evaluations/:evaluation_id/result", {
    access: { auth: "operator", scope: "evaluations:read" },
    response: ref(EvaluationResult),
    errors: [409],
    rpc: ({ params }, call) => evaluations.getEvaluationResult(evaluationRef(params), call),
    json: (answer) => resultJson(answer.result),
  });

  read(
    "listEvaluationResults",
    "GET /evaluations/:evaluation_id/results",
    "evaluations:read",
    EvaluationResultList,
    {
      rpc: ({ params }, call) => evaluations.listEvaluationResults(evaluationRef(params), call),
      json: (answer) => ({ items: answer.items.map(resultJson) }),
    },
  );

  route(app, INTERVIEW, "rescoreEvaluation", "POST /evaluations/:evaluation_id/rescore", {
    access: { auth: "operator", scope: "evaluations:write", idempotency: "required" },
    body: Type.Object({ bundle_id: Uuid }, { additionalProperties: false }),
    status: 201,
    response: ref(EvaluationResult),
    errors: [409],
    rpc: ({ params, body }, call) =>
      evaluations.rescoreEvaluation({ ...evaluationRef(params), bundleId: body.bundle_id }, call),
    json: (answer) => resultJson(answer.result),
  });
}

/**
 * The hosted interview page of a participant token (docs/pages.md): the token rides in the
 * fragment, which browsers never send, so it reaches no server's or proxy's log.
 */
export function interviewPageUrl(publicUrl: string, participantToken: string): string {
  return `${publicUrl.replace(/\/+$/, "")}/interview#${participantToken}`;
}
