import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { withTransaction } from "@evalp/kit";
import {
  type RecoverEndpointRequest,
  type RecoverEndpointResponse,
  RecoverEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { auditWebhooks } from "../audit.js";
import { countRecoverable, recoverDeliveries } from "../db/deliveries.js";
import { requireEndpoint } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

/**
 * `POST ENV/webhooks/{id}/recover`: every `failed` or `dead_letter` delivery of the endpoint
 * created since `since` becomes `pending` again, attempted at once with a fresh retry schedule
 * (its `attempt_count` keeps counting). With `dry_run` it only counts them.
 */
export function recoverEndpoint(deps: Deps) {
  return async (req: RecoverEndpointRequest, ctx: HandlerContext): Promise<RecoverEndpointResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    await requireEndpoint(deps.pool, environmentId, req.endpointId);
    const since = req.since ? timestampDate(req.since) : new Date(0);
    if (req.dryRun) {
      return create(RecoverEndpointResponseSchema, {
        count: await countRecoverable(deps.pool, req.endpointId, since),
      });
    }
    const count = await withTransaction(deps.pool, async (tx) => {
      const recovered = await recoverDeliveries(tx, req.endpointId, since);
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.recovered",
        resourceType: "webhook_endpoint",
        resourceId: req.endpointId,
        metadata: { since: since.toISOString(), count: recovered },
      });
      return recovered;
    });
    deps.wake();
    return create(RecoverEndpointResponseSchema, { count });
  };
}
