import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetAppRequest,
  type GetAppResponse,
  GetAppResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { findApp } from "../db/organizations.js";
import { appMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

export function getApp(deps: Deps) {
  return async (req: GetAppRequest): Promise<GetAppResponse> => {
    if (!isUuid(req.organizationId) || !isUuid(req.appId)) throw notFound("app");
    const row = await findApp(deps.pool, req.organizationId, req.appId);
    if (!row) throw notFound("app");
    return create(GetAppResponseSchema, { app: appMessage(row) });
  };
}
