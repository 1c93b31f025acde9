import { create } from "@bufbuild/protobuf";
import { isUuid, notFound, pageResult } from "@evalp/kit";
import {
  type ListMembershipsRequest,
  type ListMembershipsResponse,
  ListMembershipsResponseSchema,
} from "@evalp/proto/control/v1/membership";
import { listMembershipRows, membershipMessage } from "../db/membership-rows.js";
import type { Deps } from "../deps.js";

/** The organization's members and pending invitees, newest first. */
export function listMemberships(deps: Deps) {
  return async (req: ListMembershipsRequest): Promise<ListMembershipsResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const found = await listMembershipRows(deps.pool, req.organizationId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListMembershipsResponseSchema, { items: rows.map(membershipMessage), page: info });
  };
}
