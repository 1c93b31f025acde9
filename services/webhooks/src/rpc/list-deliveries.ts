import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, pageClause, pageResult } from "@evalp/kit";
import {
  type ListDeliveriesRequest,
  type ListDeliveriesResponse,
  ListDeliveriesResponseSchema,
} from "@evalp/proto/webhooks/v1/delivery";
import { DELIVERY_COLUMNS, type DeliveryRow, deliveryMessage } from "../db/deliveries.js";
import type { Deps } from "../deps.js";

/** #13: the environment's deliveries, newest first, filtered by `status` and `endpoint_id`. */
export function listDeliveries(deps: Deps) {
  return async (req: ListDeliveriesRequest, ctx: HandlerContext): Promise<ListDeliveriesResponse> => {
    const environmentId = await deps.requireEnvironment(req.environment, ctx);
    if (req.endpointId !== undefined && !isUuid(req.endpointId)) {
      return create(ListDeliveriesResponseSchema, { items: [] });
    }
    const page = pageClause(req.page, 4);
    const found = await deps.pool.query<DeliveryRow>(
      `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
       WHERE environment_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR endpoint_id = $3)
         AND ${page.where} ${page.tail}`,
      [environmentId, req.status ?? null, req.endpointId ?? null, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListDeliveriesResponseSchema, {
      items: rows.map((row) => deliveryMessage(row)),
      page: info,
    });
  };
}
