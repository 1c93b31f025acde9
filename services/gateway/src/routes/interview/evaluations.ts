import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { byPath, reads, route, writes } from "../index.js";
import { DateTime, type ENV_PREFIX, environmentRef, pageOfItems, pageQuery, ref, Uuid } from "../wire.js";
import type { InterviewApi } from "./index.js";
import {
  behavioralEventJson,
  evaluationJson,
  evaluationRef,
  listedEvaluationJson,
  operatorInterviewJson,
  participantSessionJson,
  resultJson,
  SeqPageQuery,
  SessionBody,
  seqPage,
  sessionRequest,
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

/** An evaluation and its results are read under `evaluations:read`, written under `evaluations:write`. */
const READ = reads("evaluations:read");
const WRITE = writes("evaluations:write");

/**
 * `ENV/evaluations` (docs/interview.md): evaluations, their participant sessions, the operator's view
 * of their interview and their behavioral events. Scopes `evaluations:write` / `evaluations:read`.
 */
export function evaluationRoutes(app: InterviewApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const evaluations = deps.upstreams.interview.evaluations;
  route(app, "listEvaluations", "GET /evaluations", READ, {
    query: pageQuery(EvaluationFilters),
    answer: pageOfItems(ListedEvaluation),
    list: ({ params, query }, page, call) =>
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
    item: listedEvaluationJson,
  });

  route(app, "createEvaluation", "POST /evaluations", WRITE, {
    body: Type.Object(
      { subject_id: Uuid, bundle_id: Uuid, program_id: Type.Optional(Uuid) },
      { additionalProperties: false },
    ),
    answer: ref(Evaluation),
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

  route(app, "getEvaluation", "GET /evaluations/:evaluation_id", READ, {
    answer: ref(Evaluation),
    ...byPath(evaluations.getEvaluation, evaluationRef, (answer) => evaluationJson(answer.evaluation)),
  });

  route(app, "createParticipantSession", "POST /evaluations/:evaluation_id/participant-sessions", WRITE, {
    // A JSON body is required, as FastAPI requires a body model: `{}` takes the default TTL.
    body: SessionBody(3600),
    answer: ref(ParticipantSession),
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
    "revokeParticipantSession",
    "DELETE /evaluations/:evaluation_id/participant-sessions/:session_id",
    WRITE,
    {
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

  route(app, "getEvaluationInterview", "GET /evaluations/:evaluation_id/interview", READ, {
    query: SeqPageQuery,
    answer: ref(EvaluationInterview),
    rpc: ({ params, query }, call) =>
      evaluations.getEvaluationInterview({ ...evaluationRef(params), ...seqPage(query) }, call),
    json: (answer) => operatorInterviewJson(answer.interview),
  });

  route(app, "listBehavioralEvents", "GET /evaluations/:evaluation_id/behavioral-events", READ, {
    answer: pageOfItems(BehavioralEvent),
    list: ({ params }, page, call) =>
      evaluations.listBehavioralEvents({ ...evaluationRef(params), page }, call),
    item: behavioralEventJson,
  });
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
export function resultRoutes(app: InterviewApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const evaluations = deps.upstreams.interview.evaluations;
  route(app, "getEvaluationResult", "GET /evaluations/:evaluation_id/result", READ, {
    answer: ref(EvaluationResult),
    ...byPath(evaluations.getEvaluationResult, evaluationRef, (answer) => resultJson(answer.result)),
  });

  route(app, "listEvaluationResults", "GET /evaluations/:evaluation_id/results", READ, {
    answer: ref(EvaluationResultList),
    ...byPath(evaluations.listEvaluationResults, evaluationRef, (answer) => ({
      items: answer.items.map(resultJson),
    })),
  });

  route(app, "rescoreEvaluation", "POST /evaluations/:evaluation_id/rescore", WRITE, {
    body: Type.Object({ bundle_id: Uuid }, { additionalProperties: false }),
    answer: ref(EvaluationResult),
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
