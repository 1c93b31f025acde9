import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { withTransaction } from "@evalp/kit";
import {
  type PutAgentPricesRequest,
  type PutAgentPricesResponse,
  PutAgentPricesResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { replacePrices } from "../db/agent.js";
import type { Deps } from "../deps.js";

/** `PUT ENV/agent-prices`: the environment's price table, replaced as a whole. */
export function putAgentPrices(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: PutAgentPricesRequest, ctx: HandlerContext): Promise<PutAgentPricesResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const updatedAt = await withTransaction(deps.pool, async (tx) => {
      const now = new Date();
      await replacePrices(tx, environment.environmentId, req.prices, now);
      return now;
    });
    return create(PutAgentPricesResponseSchema, {
      prices: req.prices,
      updatedAt: timestampFromDate(updatedAt),
    });
  };
}
