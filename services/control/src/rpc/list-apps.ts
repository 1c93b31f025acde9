import { create } from "@bufbuild/protobuf";
import { isUuid, notFound, pageClause, pageResult } from "@evalp/kit";
import {
  type ListAppsRequest,
  type ListAppsResponse,
  ListAppsResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { APP_COLUMNS, type AppRow, appMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** The organization's apps, newest first, one keyset page. */
export function listApps(deps: Deps) {
  return async (req: ListAppsRequest): Promise<ListAppsResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const page = pageClause(req.page, 2);
    const found = await deps.pool.query<AppRow>(
      `SELECT ${APP_COLUMNS} FROM apps WHERE organization_id = $1 AND ${page.where} ${page.tail}`,
      [req.organizationId, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListAppsResponseSchema, { items: rows.map(appMessage), page: info });
  };
}
