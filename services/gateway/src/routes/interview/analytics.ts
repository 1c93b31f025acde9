import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import { RequestValidationError } from "../../validation/json-body.js";
import type { RouteDeps } from "../deps.js";
import { reads, route } from "../index.js";
import { DateTime, type ENV_PREFIX, environmentRef, ref } from "../wire.js";
import type { InterviewApi } from "./index.js";
import { summaryJson } from "./wire.js";
import { AnalyticsSummary } from "./wire-schemas.js";

/** docs/interview.md: a summary spans at most 366 days. */
export const MAX_SPAN_DAYS = 366;

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
export function analyticsRoutes(app: InterviewApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  route(app, "getAnalyticsSummary", "GET /analytics/summary", reads("analytics:read"), {
    query: Type.Object({ starts_at: DateTime, ends_at: DateTime }),
    answer: ref(AnalyticsSummary),
    handler: async ({ request, call }) => {
      const startsAt = new Date(request.query.starts_at);
      const endsAt = new Date(request.query.ends_at);
      windowProblem(startsAt, endsAt, request.query.ends_at);
      const answer = await deps.upstreams.interview.analytics.getSummary(
        {
          environment: environmentRef(request.params),
          startsAt: timestampFromDate(startsAt),
          endsAt: timestampFromDate(endsAt),
        },
        call,
      );
      return summaryJson(request.params.environment_id, startsAt, endsAt, answer);
    },
  });
}
