import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type SetActiveOrganizationRequest,
  type SetActiveOrganizationResponse,
  SetActiveOrganizationResponseSchema,
} from "@evalp/proto/control/v1/auth";
import { switchActiveOrganization } from "../db/users.js";
import type { Deps } from "../deps.js";

/** Switches the session to another organization the user is an active member of (else 404). */
export function setActiveOrganization(deps: Deps) {
  return async (req: SetActiveOrganizationRequest): Promise<SetActiveOrganizationResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    if (!(await switchActiveOrganization(deps.pool, req.accessToken, req.organizationId))) {
      throw notFound("organization");
    }
    return create(SetActiveOrganizationResponseSchema, { organizationId: req.organizationId });
  };
}
