import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { pageClause, pageResult } from "@evalp/kit";
import {
  type ListEndpointsRequest,
  type ListEndpointsResponse,
  ListEndpointsResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { ENDPOINT_COLUMNS, type EndpointRow, endpointMessage } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

/** #12: the environment's endpoints (not deleted), newest first; never their secrets. */
export function listEndpoints(deps: Deps) {
  return async (req: ListEndpointsRequest, ctx: HandlerContext): Promise<ListEndpointsResponse> => {
    const environmentId = await deps.requireEnvironment(req.environment, ctx);
    const page = pageClause(req.page, 2);
    const found = await deps.pool.query<EndpointRow>(
      `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
       WHERE environment_id = $1 AND deleted_at IS NULL AND ${page.where} ${page.tail}`,
      [environmentId, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListEndpointsResponseSchema, { items: rows.map(endpointMessage), page: info });
  };
}
