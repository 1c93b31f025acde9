import { quotaCountersMessage } from "@evalp/kit";
import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { reads, route, writes } from "../index.js";
import { type ENV_PREFIX, environmentRef, ref } from "../wire.js";
import type { ControlApi } from "./index.js";
import { counters, QuotasBody, quotasJson } from "./wire.js";

/** `GET ENV/quotas` and #6 `PATCH ENV/quotas` (under the ENV prefix; optimistic concurrency). */
export function quotaRoutes(app: ControlApi<typeof ENV_PREFIX>, deps: RouteDeps): void {
  const quotas = deps.upstreams.quotas;

  route(app, "getQuotas", "GET /quotas", reads("org:read"), {
    answer: ref(QuotasBody),
    handler: async ({ request, call }) => {
      const answer = await quotas.getQuotas({ environment: environmentRef(request.params) }, call);
      return quotasJson(answer.quotas);
    },
  });

  route(app, "updateQuotas", "PATCH /quotas", writes("quotas:write"), {
    body: Type.Object(
      {
        expected_revision: Type.Integer({ minimum: 1, maximum: 2_147_483_647 }),
        limits: counters(() => Type.Integer({ minimum: 0, maximum: 1_000_000_000 }), {
          additionalProperties: false,
        }),
      },
      { additionalProperties: false },
    ),
    answer: ref(QuotasBody),
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
