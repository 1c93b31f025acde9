import { create } from "@bufbuild/protobuf";
import { type QuotaCounters, QuotaCountersSchema, type Quotas } from "@evalp/proto/control/v1/quota";
import { type TInteger, type TObject, Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import type { RouteDeps } from "../deps.js";
import { type EnvPath, environmentRef } from "../environment.js";
import { COMMON_ERRORS, EnvParams, ErrorBody, IdempotentHeaders, Uuid } from "../schemas.js";

/** The seven counters (contract §5b) and their proto field names. */
const COUNTERS = {
  active_participant_sessions: "activeParticipantSessions",
  active_subjects: "activeSubjects",
  behavioral_event_batch_size: "behavioralEventBatchSize",
  continuous_event_batch_size: "continuousEventBatchSize",
  evaluations: "evaluations",
  programs: "programs",
  webhook_endpoints: "webhookEndpoints",
} as const;
type Counter = keyof typeof COUNTERS;

function counters(schema: () => TInteger): TObject {
  const properties = Object.fromEntries(Object.keys(COUNTERS).map((name) => [name, schema()]));
  return Type.Object(properties, { additionalProperties: false });
}

const Limits = counters(() => Type.Integer({ minimum: 0, maximum: 1_000_000_000 }));
const QuotasBody = Type.Object(
  {
    environment_id: Uuid,
    limits: counters(() => Type.Integer()),
    usage: counters(() => Type.Integer()),
    revision: Type.Integer(),
    schema_version: Type.Integer(),
  },
  { title: "EnvironmentQuotas" },
);

function countersJson(message: QuotaCounters | undefined): Record<Counter, number> {
  const out = {} as Record<Counter, number>;
  for (const [name, field] of Object.entries(COUNTERS) as [Counter, (typeof COUNTERS)[Counter]][]) {
    out[name] = Number(message?.[field] ?? 0n);
  }
  return out;
}

function quotasJson(quotas: Quotas | undefined) {
  if (!quotas) throw new Error("upstream returned no quotas");
  return {
    environment_id: quotas.environmentId,
    limits: countersJson(quotas.limits),
    usage: countersJson(quotas.usage),
    revision: quotas.revision,
    schema_version: quotas.schemaVersion,
  };
}

const ENV = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** `GET ENV/quotas` and #6 `PATCH ENV/quotas` (optimistic concurrency on `expected_revision`). */
export function quotaRoutes(app: FastifyInstance, deps: RouteDeps): void {
  app.get(
    `${ENV}/quotas`,
    {
      config: { access: { auth: "operator", scope: "org:read" } },
      schema: {
        tags: ["control"],
        summary: "The environment's limits and their usage",
        params: EnvParams,
        response: { 200: QuotasBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const answer = await deps.upstreams.quotas.getQuotas(
        { environment: environmentRef(request.params as EnvPath) },
        callOptions(request),
      );
      return quotasJson(answer.quotas);
    },
  );

  app.patch(
    `${ENV}/quotas`,
    {
      config: { access: { auth: "operator", scope: "quotas:write", idempotency: "required" } },
      schema: {
        tags: ["control"],
        summary: "Replace all seven limits; 409 revision_conflict when the revision is stale",
        params: EnvParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { expected_revision: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }), limits: Limits },
          { additionalProperties: false },
        ),
        response: { 200: QuotasBody, 409: ErrorBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const body = request.body as { expected_revision: number; limits: Record<Counter, number> };
      const limits = create(QuotaCountersSchema);
      for (const [name, field] of Object.entries(COUNTERS) as [Counter, (typeof COUNTERS)[Counter]][]) {
        limits[field] = BigInt(body.limits[name]);
      }
      const answer = await deps.upstreams.quotas.updateQuotas(
        {
          environment: environmentRef(request.params as EnvPath),
          expectedRevision: body.expected_revision,
          limits,
        },
        callOptions(request),
      );
      return quotasJson(answer.quotas);
    },
  );
}
