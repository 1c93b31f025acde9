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
import { requireEndpoint } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

/**
 * `POST ENV/webhooks/{id}/recover`: every `failed` or `dead_letter` delivery of the endpoint
 * created since `since` becomes `pending` again, attempted at once with a fresh retry schedule
 * (its `attempt_count` keeps counting). With `dry_run` it only counts them.
 */
export function recoverEndpoint(deps: Deps) {
  return async (req: RecoverEndpointRequest, ctx: HandlerContext): Promise<RecoverEndpointResponse> => {
    const environmentId = await deps.requireEnvironment(req.environment, ctx);
    await requireEndpoint(deps.pool, environmentId, req.endpointId);
    const since = req.since ? timestampDate(req.since) : new Date(0);
    if (req.dryRun) {
      const counted = await deps.pool.query<{ n: number }>(
        `SELECT count(*) AS n FROM webhook_deliveries
         WHERE endpoint_id = $1 AND status IN ('failed', 'dead_letter') AND created_at >= $2`,
        [req.endpointId, since],
      );
      return create(RecoverEndpointResponseSchema, { count: counted.rows[0]?.n ?? 0 });
    }
    const updated = await withTransaction(deps.pool, async (tx) => {
      const recovered = await tx.query(
        `UPDATE webhook_deliveries d
       SET status = 'pending', next_attempt_at = now(), series_start = d.attempt_count, leased_until = NULL,
           claim_token = NULL, updated_at = clock_timestamp()
       FROM (SELECT id FROM webhook_deliveries
             WHERE endpoint_id = $1 AND status IN ('failed', 'dead_letter') AND created_at >= $2
             ORDER BY id FOR UPDATE) r
       WHERE d.id = r.id`,
        [req.endpointId, since],
      );
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_endpoint.recovered",
        resourceType: "webhook_endpoint",
        resourceId: req.endpointId,
        metadata: { since: since.toISOString(), count: recovered.rowCount ?? 0 },
      });
      return recovered;
    });
    deps.wake();
    return create(RecoverEndpointResponseSchema, { count: updated.rowCount ?? 0 });
  };
}
