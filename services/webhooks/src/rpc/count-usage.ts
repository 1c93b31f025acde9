import { create } from "@bufbuild/protobuf";
import { isUuid } from "@evalp/kit";
import {
  type CountUsageRequest,
  type CountUsageResponse,
  CountUsageResponseSchema,
} from "@evalp/proto/common/v1/usage";
import { countEndpoints } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

/** Usage of the counter this plane owns: `webhook_endpoints`, the endpoints not deleted. */
export function countUsage(deps: Deps) {
  return async (req: CountUsageRequest): Promise<CountUsageResponse> => {
    const count = isUuid(req.environmentId) ? await countEndpoints(deps.pool, req.environmentId) : 0;
    return create(CountUsageResponseSchema, { usage: { webhook_endpoints: BigInt(count) } });
  };
}
