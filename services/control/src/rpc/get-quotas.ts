import { create } from "@bufbuild/protobuf";
import {
  type GetQuotasRequest,
  type GetQuotasResponse,
  GetQuotasResponseSchema,
} from "@evalp/proto/control/v1/quota";
import { quotasMessage, readQuotas } from "../db/quotas.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

export function getQuotas(deps: Deps) {
  return async (req: GetQuotasRequest): Promise<GetQuotasResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const row = await readQuotas(deps.pool, req.environment?.environmentId ?? "");
    return create(GetQuotasResponseSchema, { quotas: await quotasMessage(deps.pool, row, deps.usage) });
  };
}
