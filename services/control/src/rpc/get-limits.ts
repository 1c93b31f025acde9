import { create } from "@bufbuild/protobuf";
import { isUuid, notFound, quotaCountersMessage } from "@evalp/kit";
import {
  type GetLimitsRequest,
  type GetLimitsResponse,
  GetLimitsResponseSchema,
} from "@evalp/proto/control/v1/quota";
import { readQuotas } from "../db/quotas.js";
import type { Deps } from "../deps.js";

/** The environment's limits, for planes that enforce a quota on rows they own. */
export function getLimits(deps: Deps) {
  return async (req: GetLimitsRequest): Promise<GetLimitsResponse> => {
    if (!isUuid(req.environmentId)) throw notFound("environment");
    const row = await readQuotas(deps.pool, req.environmentId);
    return create(GetLimitsResponseSchema, { limits: quotaCountersMessage(row) });
  };
}
