import { quotaCountersMessage } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { environmentRef } from "../environment.js";
import { type Api, route } from "../route.js";
import { EnvParams, ref } from "../schemas.js";
import { counters, QuotasBody, quotasJson } from "./wire.js";

const TAG = "control";

/** `GET ENV/quotas` and #6 `PATCH ENV/quotas` (under the ENV prefix; optimistic concurrency). */
export function quotaRoutes(app: Api, deps: RouteDeps): void {
  const quotas = deps.upstreams.quotas;

  route(app, TAG, {
    method: "GET",
    url: "/quotas",
    operationId: "getQuotas",
    summary: "Get the quotas",
    description:
      "The environment's seven limits and their usage, with the `revision` a change must name. " +
      "Requires `org:read`.",
    access: { auth: "operator", scope: "org:read" },
    params: EnvParams,
    response: ref(QuotasBody),
    responseDescription: "The environment's quotas.",
    handler: async ({ request, call }) => {
      const answer = await quotas.getQuotas({ environment: environmentRef(request.params) }, call);
      return quotasJson(answer.quotas);
    },
  });

  route(app, TAG, {
    method: "PATCH",
    url: "/quotas",
    operationId: "updateQuotas",
    summary: "Update the quotas",
    description:
      "Replaces all seven limits and adds 1 to `revision`. `expected_revision` must be the " +
      "current one, else 409 `revision_conflict` (with both revisions in `context`). A limit " +
      "below its usage is allowed: it blocks new creations only. Requires `quotas:write` and " +
      "an Idempotency-Key.",
    access: { auth: "operator", scope: "quotas:write", idempotency: "required" },
    params: EnvParams,
    body: Type.Object(
      {
        expected_revision: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
        limits: counters(() => Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), {
          additionalProperties: false,
        }),
      },
      { additionalProperties: false },
    ),
    response: ref(QuotasBody),
    responseDescription: "The quotas, updated.",
    errors: [409],
    handler: async ({ request, call }) => {
      const answer = await quotas.updateQuotas(
        {
          environment: environmentRef(request.params),
          expectedRevision: request.body.expected_revision,
          limits: quotaCountersMessage(request.body.limits),
        },
        call,
      );
      return quotasJson(answer.quotas);
    },
  });
}
