import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { pageResult } from "@evalp/kit";
import {
  type ListEndpointsRequest,
  type ListEndpointsResponse,
  ListEndpointsResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { endpointMessage, listEndpointRows } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

/** #12: the environment's endpoints (not deleted), newest first; never their secrets. */
export function listEndpoints(deps: Deps) {
  return async (req: ListEndpointsRequest, ctx: HandlerContext): Promise<ListEndpointsResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    const found = await listEndpointRows(deps.pool, environmentId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListEndpointsResponseSchema, { items: rows.map(endpointMessage), page: info });
  };
}
