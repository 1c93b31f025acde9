import { create } from "@bufbuild/protobuf";
import { pageClause, pageResult } from "@evalp/kit";
import {
  type ListEnvironmentsRequest,
  type ListEnvironmentsResponse,
  ListEnvironmentsResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { ENVIRONMENT_COLUMNS, type EnvironmentRow, environmentMessage } from "../db/rows.js";
import { requireApp } from "../db/scope.js";
import type { Deps } from "../deps.js";

/** The app's environments, newest first, one keyset page. */
export function listEnvironments(deps: Deps) {
  return async (req: ListEnvironmentsRequest): Promise<ListEnvironmentsResponse> => {
    await requireApp(deps.pool, req.organizationId, req.appId);
    const page = pageClause(req.page, 2);
    const found = await deps.pool.query<EnvironmentRow>(
      `SELECT ${ENVIRONMENT_COLUMNS} FROM environments WHERE app_id = $1 AND ${page.where} ${page.tail}`,
      [req.appId, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListEnvironmentsResponseSchema, { items: rows.map(environmentMessage), page: info });
  };
}
