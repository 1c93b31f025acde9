import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type GetBundleContentsRequest,
  type GetBundleContentsResponse,
  GetBundleContentsResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { bundleContents, findBundle } from "../db/bundles.js";
import { bundleMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** A bundle and its six contents, for the plane that runs interviews on it. */
export function getBundleContents(deps: Deps, requireApp: RequireApp) {
  return async (req: GetBundleContentsRequest, ctx: HandlerContext): Promise<GetBundleContentsResponse> => {
    const app = await requireApp(req.app, ctx);
    const bundle = await findBundle(deps.pool, app.appId, req.bundleId);
    const contents = await bundleContents(deps.pool, bundle);
    return create(GetBundleContentsResponseSchema, {
      bundle: bundleMessage(bundle),
      contents: contents as unknown as JsonObject,
    });
  };
}
