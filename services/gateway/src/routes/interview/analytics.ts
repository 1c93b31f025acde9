import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { RequestValidationError } from "../../validation/json-body.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import { COMMON_ERRORS, DateTime, EnvParams, Uuid } from "../schemas.js";

/** Contract §5b: a summary spans at most 366 days. */
export const MAX_SPAN_DAYS = 366;

const SummaryBody = Type.Object(
  {
    environment_id: Uuid,
    starts_at: DateTime,
    ends_at: DateTime,
    sessions_started: Type.Integer(),
    sessions_completed: Type.Integer(),
    completion_rate: Type.Number(),
    median_questions: Type.Union([Type.Number(), Type.Null()]),
    median_active_ms: Type.Union([Type.Number(), Type.Null()]),
    question_metrics: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    privacy_floor_applied: Type.Boolean(),
  },
  { title: "AnalyticsSummary" },
);

/** The window's own rules, past its two date-times' shapes: `ends_at` after `starts_at`, ≤ 366 days. */
function windowProblem(startsAt: Date, endsAt: Date, input: string) {
  const span = endsAt.getTime() - startsAt.getTime();
  const error =
    span <= 0
      ? "ends_at must be after starts_at"
      : span > MAX_SPAN_DAYS * 24 * 60 * 60 * 1000
        ? `the window spans more than ${MAX_SPAN_DAYS} days`
        : null;
  if (!error) return;
  throw new RequestValidationError([
    { loc: ["query", "ends_at"], type: "value_error", msg: `Value error, ${error}`, input, ctx: { error } },
  ]);
}

/** `GET ENV/analytics/summary?starts_at&ends_at` (scope `analytics:read`). */
export function analyticsRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id/analytics/summary",
    {
      config: { access: { auth: "operator", scope: "analytics:read" } },
      schema: {
        tags: ["interview"],
        summary: "Interviews started in [starts_at, ends_at): completion, medians, per-question metrics",
        params: EnvParams,
        querystring: Type.Object({ starts_at: DateTime, ends_at: DateTime }),
        response: { 200: SummaryBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as EnvPath;
      const query = request.query as { starts_at: string; ends_at: string };
      const startsAt = new Date(query.starts_at);
      const endsAt = new Date(query.ends_at);
      windowProblem(startsAt, endsAt, query.ends_at);
      const answer = await deps.upstreams.interview.analytics.getSummary(
        {
          environment: environmentRef(params),
          startsAt: timestampFromDate(startsAt),
          endsAt: timestampFromDate(endsAt),
        },
        callOptions(request),
      );
      return {
        environment_id: params.environment_id,
        starts_at: startsAt.toISOString(),
        ends_at: endsAt.toISOString(),
        sessions_started: Number(answer.sessionsStarted),
        sessions_completed: Number(answer.sessionsCompleted),
        completion_rate: answer.completionRate,
        median_questions: answer.medianQuestions ?? null,
        median_active_ms: answer.medianActiveMs ?? null,
        question_metrics: answer.questionMetrics,
        privacy_floor_applied: answer.privacyFloorApplied,
      };
    },
  );
}
