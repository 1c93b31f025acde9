import { create } from "@bufbuild/protobuf";
import {
  type ListSessionOrganizationsRequest,
  type ListSessionOrganizationsResponse,
  ListSessionOrganizationsResponseSchema,
} from "@evalp/proto/control/v1/auth";
import { sessionOrganizations } from "../db/sessions-active.js";
import type { Deps } from "../deps.js";

/** The organizations a session may switch to: those its user is an active member of. */
export function listSessionOrganizations(deps: Deps) {
  return async (req: ListSessionOrganizationsRequest): Promise<ListSessionOrganizationsResponse> => {
    const rows = await sessionOrganizations(deps.pool, req.accessToken);
    return create(ListSessionOrganizationsResponseSchema, {
      items: rows.map((row) => ({ organizationId: row.organization_id, name: row.name, role: row.role })),
    });
  };
}
