import { create } from "@bufbuild/protobuf";
import { notFound } from "@evalp/kit";
import {
  type GetActiveOrganizationRequest,
  type GetActiveOrganizationResponse,
  GetActiveOrganizationResponseSchema,
} from "@evalp/proto/control/v1/auth";
import { activeOrganization } from "../db/sessions-active.js";
import type { Deps } from "../deps.js";

export function getActiveOrganization(deps: Deps) {
  return async (req: GetActiveOrganizationRequest): Promise<GetActiveOrganizationResponse> => {
    const organizationId = await activeOrganization(deps.pool, req.accessToken);
    if (!organizationId) throw notFound("organization");
    return create(GetActiveOrganizationResponseSchema, { organizationId });
  };
}
