import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type GetDeliveryRequest,
  type GetDeliveryResponse,
  GetDeliveryResponseSchema,
} from "@evalp/proto/webhooks/v1/delivery";
import { attemptsOf, deliveryMessage, requireDelivery } from "../db/deliveries.js";
import type { Deps } from "../deps.js";

/** A delivery with every attempt made, oldest first. */
export function getDelivery(deps: Deps) {
  return async (req: GetDeliveryRequest, ctx: HandlerContext): Promise<GetDeliveryResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    const row = await requireDelivery(deps.pool, environmentId, req.deliveryId);
    return create(GetDeliveryResponseSchema, {
      delivery: deliveryMessage(row, await attemptsOf(deps.pool, row.id)),
    });
  };
}
