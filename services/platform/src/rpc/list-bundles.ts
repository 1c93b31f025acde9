import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { pageResult } from "@evalp/kit";
import {
  type ListBundlesRequest,
  type ListBundlesResponse,
  ListBundlesResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { listBundleRows } from "../db/bundles.js";
import { bundleMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** #8: the app's bundles, newest first, optionally of one status. */
export function listBundles(deps: Deps, requireApp: RequireApp) {
  return async (req: ListBundlesRequest, ctx: HandlerContext): Promise<ListBundlesResponse> => {
    const app = await requireApp(req.app, ctx);
    const found = await listBundleRows(deps.pool, app.appId, req.status ?? null, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListBundlesResponseSchema, { items: rows.map(bundleMessage), page: info });
  };
}
