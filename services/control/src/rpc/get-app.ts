import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetAppRequest,
  type GetAppResponse,
  GetAppResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { APP_COLUMNS, type AppRow, appMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

export function getApp(deps: Deps) {
  return async (req: GetAppRequest): Promise<GetAppResponse> => {
    if (!isUuid(req.organizationId) || !isUuid(req.appId)) throw notFound("app");
    const found = await deps.pool.query<AppRow>(
      `SELECT ${APP_COLUMNS} FROM apps WHERE id = $1 AND organization_id = $2`,
      [req.appId, req.organizationId],
    );
    const row = found.rows[0];
    if (!row) throw notFound("app");
    return create(GetAppResponseSchema, { app: appMessage(row) });
  };
}
