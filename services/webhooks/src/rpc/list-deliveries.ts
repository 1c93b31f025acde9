import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, pageResult } from "@evalp/kit";
import {
  type ListDeliveriesRequest,
  type ListDeliveriesResponse,
  ListDeliveriesResponseSchema,
} from "@evalp/proto/webhooks/v1/delivery";
import { deliveryMessage, listDeliveryRows } from "../db/deliveries.js";
import type { Deps } from "../deps.js";

/** #13: the environment's deliveries, newest first, filtered by `status`, `endpoint_id` and `event_type`. */
export function listDeliveries(deps: Deps) {
  return async (req: ListDeliveriesRequest, ctx: HandlerContext): Promise<ListDeliveriesResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    if (req.endpointId !== undefined && !isUuid(req.endpointId)) {
      return create(ListDeliveriesResponseSchema, { items: [] });
    }
    const found = await listDeliveryRows(
      deps.pool,
      environmentId,
      { status: req.status ?? null, endpointId: req.endpointId ?? null, eventType: req.eventType ?? null },
      req.page,
    );
    const { rows, info } = pageResult(found, req.page);
    return create(ListDeliveriesResponseSchema, {
      items: rows.map((row) => deliveryMessage(row)),
      page: info,
    });
  };
}
