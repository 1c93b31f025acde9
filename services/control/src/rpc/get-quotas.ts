import { create } from "@bufbuild/protobuf";
import { notFound } from "@evalp/kit";
import { type GetQuotasRequest, type GetQuotasResponse, GetQuotasResponseSchema } from "@evalp/proto/control/v1/quota";
import { QUOTA_COLUMNS, type QuotaRow, quotasMessage } from "../db/quotas.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

export function getQuotas(deps: Deps) {
  return async (req: GetQuotasRequest): Promise<GetQuotasResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const found = await deps.pool.query<QuotaRow>(`SELECT ${QUOTA_COLUMNS} FROM quotas WHERE environment_id = $1`, [
      req.environment?.environmentId,
    ]);
    const row = found.rows[0];
    if (!row) throw notFound("environment");
    return create(GetQuotasResponseSchema, { quotas: await quotasMessage(deps.pool, row) });
  };
}
