import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type GetBundleRequest,
  type GetBundleResponse,
  GetBundleResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { findBundle } from "../db/bundles.js";
import { bundleMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

export function getBundle(deps: Deps, requireApp: RequireApp) {
  return async (req: GetBundleRequest, ctx: HandlerContext): Promise<GetBundleResponse> => {
    const app = await requireApp(req.app, ctx);
    return create(GetBundleResponseSchema, {
      bundle: bundleMessage(await findBundle(deps.pool, app.appId, req.bundleId)),
    });
  };
}
