import { create } from "@bufbuild/protobuf";
import { isUuid, notFound, pageClause, pageResult } from "@evalp/kit";
import {
  type ListMembershipsRequest,
  type ListMembershipsResponse,
  ListMembershipsResponseSchema,
} from "@evalp/proto/control/v1/membership";
import { MEMBERSHIP_SELECT, type MembershipRow, membershipMessage } from "../db/membership-rows.js";
import type { Deps } from "../deps.js";

/** The organization's members and pending invitees, newest first. */
export function listMemberships(deps: Deps) {
  return async (req: ListMembershipsRequest): Promise<ListMembershipsResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const page = pageClause(req.page, 2, "m.");
    const found = await deps.pool.query<MembershipRow>(
      `${MEMBERSHIP_SELECT} WHERE m.organization_id = $1 AND ${page.where} ${page.tail}`,
      [req.organizationId, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListMembershipsResponseSchema, { items: rows.map(membershipMessage), page: info });
  };
}
