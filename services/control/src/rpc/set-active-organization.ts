import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type SetActiveOrganizationRequest,
  type SetActiveOrganizationResponse,
  SetActiveOrganizationResponseSchema,
} from "@evalp/proto/control/v1/auth";
import { sha256 } from "../credentials.js";
import type { Deps } from "../deps.js";

/** Switches the session to another organization the user is an active member of (else 404). */
export function setActiveOrganization(deps: Deps) {
  return async (req: SetActiveOrganizationRequest): Promise<SetActiveOrganizationResponse> => {
    if (!isUuid(req.organizationId)) throw notFound("organization");
    const updated = await deps.pool.query(
      `UPDATE sessions s SET active_organization_id = $2
       WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND EXISTS (
         SELECT 1 FROM memberships m WHERE m.user_id = s.user_id AND m.organization_id = $2 AND m.status = 'active')`,
      [sha256(req.accessToken), req.organizationId],
    );
    if (updated.rowCount === 0) throw notFound("organization");
    return create(SetActiveOrganizationResponseSchema, { organizationId: req.organizationId });
  };
}
