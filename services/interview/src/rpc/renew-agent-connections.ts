import { create } from "@bufbuild/protobuf";
import { isUuid } from "@evalp/kit";
import {
  type RenewAgentConnectionsRequest,
  type RenewAgentConnectionsResponse,
  RenewAgentConnectionsResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { AGENT_LEASE_MS } from "../agent/connections.js";
import { renewConnections } from "../db/agent-connections.js";
import type { Deps } from "../deps.js";

/** Leases renewed by the gateway that holds the sockets; it is told which it should no longer hold. */
export function renewAgentConnections(deps: Deps) {
  return async (req: RenewAgentConnectionsRequest): Promise<RenewAgentConnectionsResponse> => {
    const ids = req.connectionIds.filter(isUuid);
    const known = new Set(await renewConnections(deps.pool, ids, AGENT_LEASE_MS));
    return create(RenewAgentConnectionsResponseSchema, {
      unknownConnectionIds: req.connectionIds.filter((id) => !known.has(id)),
    });
  };
}
