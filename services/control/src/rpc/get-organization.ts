import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetOrganizationRequest,
  type GetOrganizationResponse,
  GetOrganizationResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { findOrganization } from "../db/organizations.js";
import { organizationMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

export function getOrganization(deps: Deps) {
  return async (req: GetOrganizationRequest): Promise<GetOrganizationResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const row = await findOrganization(deps.pool, req.organizationId);
    if (!row) throw notFound("organization");
    return create(GetOrganizationResponseSchema, { organization: organizationMessage(row) });
  };
}
