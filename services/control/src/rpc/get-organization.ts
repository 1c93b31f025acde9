import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetOrganizationRequest,
  type GetOrganizationResponse,
  GetOrganizationResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { type OrganizationRow, organizationMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

export function getOrganization(deps: Deps) {
  return async (req: GetOrganizationRequest): Promise<GetOrganizationResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const found = await deps.pool.query<OrganizationRow>(
      "SELECT id, name, created_at FROM organizations WHERE id = $1",
      [req.organizationId],
    );
    const row = found.rows[0];
    if (!row) throw notFound("organization");
    return create(GetOrganizationResponseSchema, { organization: organizationMessage(row) });
  };
}
