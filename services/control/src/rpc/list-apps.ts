import { create } from "@bufbuild/protobuf";
import { isUuid, notFound, pageResult } from "@evalp/kit";
import {
  type ListAppsRequest,
  type ListAppsResponse,
  ListAppsResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { listAppRows } from "../db/organizations.js";
import { appMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** The organization's apps, newest first, one keyset page. */
export function listApps(deps: Deps) {
  return async (req: ListAppsRequest): Promise<ListAppsResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const found = await listAppRows(deps.pool, req.organizationId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListAppsResponseSchema, { items: rows.map(appMessage), page: info });
  };
}
