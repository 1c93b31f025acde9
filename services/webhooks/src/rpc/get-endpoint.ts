import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type GetEndpointRequest,
  type GetEndpointResponse,
  GetEndpointResponseSchema,
} from "@evalp/proto/webhooks/v1/endpoint";
import { endpointMessage, requireEndpoint } from "../db/endpoints.js";
import type { Deps } from "../deps.js";

export function getEndpoint(deps: Deps) {
  return async (req: GetEndpointRequest, ctx: HandlerContext): Promise<GetEndpointResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    const row = await requireEndpoint(deps.pool, environmentId, req.endpointId);
    return create(GetEndpointResponseSchema, { endpoint: endpointMessage(row) });
  };
}
