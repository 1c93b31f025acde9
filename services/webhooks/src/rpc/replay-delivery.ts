import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { withTransaction } from "@evalp/kit";
import {
  type ReplayDeliveryRequest,
  type ReplayDeliveryResponse,
  ReplayDeliveryResponseSchema,
} from "@evalp/proto/webhooks/v1/delivery";
import { auditWebhooks } from "../audit.js";
import { deliveryMessage, replayDeliveryRow, requireDelivery } from "../db/deliveries.js";
import type { Deps } from "../deps.js";

/**
 * #14: any delivery, whatever its status, becomes `pending` and is attempted again at once, with
 * a fresh retry schedule; `attempt_count` keeps counting. An attempt already in flight keeps its
 * result as an attempt but no longer decides the status.
 */
export function replayDelivery(deps: Deps) {
  return async (req: ReplayDeliveryRequest, ctx: HandlerContext): Promise<ReplayDeliveryResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    await requireDelivery(deps.pool, environmentId, req.deliveryId);
    const updated = await withTransaction(deps.pool, async (tx) => {
      const replayed = await replayDeliveryRow(tx, req.deliveryId);
      await auditWebhooks(tx, ctx, req.environment, {
        action: "webhook_delivery.replayed",
        resourceType: "webhook_delivery",
        resourceId: req.deliveryId,
      });
      return replayed;
    });
    deps.wake();
    return create(ReplayDeliveryResponseSchema, {
      delivery: deliveryMessage(updated),
    });
  };
}
