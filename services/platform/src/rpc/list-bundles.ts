import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { pageClause, pageResult } from "@evalp/kit";
import {
  type ListBundlesRequest,
  type ListBundlesResponse,
  ListBundlesResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-scope.js";
import { BUNDLE_COLUMNS, type BundleRow, bundleMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** #8: the app's bundles, newest first, optionally of one status. */
export function listBundles(deps: Deps, requireApp: RequireApp) {
  return async (req: ListBundlesRequest, ctx: HandlerContext): Promise<ListBundlesResponse> => {
    const app = await requireApp(req.app, ctx);
    const page = pageClause(req.page, 3);
    const found = await deps.pool.query<BundleRow>(
      `SELECT ${BUNDLE_COLUMNS} FROM bundles WHERE app_id = $1 AND ($2::text IS NULL OR status = $2)
       AND ${page.where} ${page.tail}`,
      [app.appId, req.status ?? null, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListBundlesResponseSchema, { items: rows.map(bundleMessage), page: info });
  };
}
