import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateOrganizationRequest,
  type CreateOrganizationResponse,
  CreateOrganizationResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { writeAudit } from "../db/audit.js";
import { type OrganizationRow, organizationMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/** A new organization whose creator becomes its owner. */
export function createOrganization(deps: Deps) {
  return async (req: CreateOrganizationRequest, ctx: HandlerContext): Promise<CreateOrganizationResponse> => {
    const context = requestContext(ctx.values);
    const organization = await withTransaction(deps.pool, async (tx) => {
      const inserted = await tx.query<OrganizationRow>(
        "INSERT INTO organizations (id, name) VALUES ($1, $2) RETURNING id, name, created_at",
        [newId(), req.name],
      );
      const row = inserted.rows[0] as OrganizationRow;
      await tx.query(
        `INSERT INTO memberships (id, organization_id, user_id, role, status)
         VALUES ($1, $2, $3, 'owner', 'active')`,
        [newId(), row.id, req.userId],
      );
      await writeAudit(tx, context, {
        organizationId: row.id,
        action: "organization.created",
        resourceType: "organization",
        resourceId: row.id,
        metadata: { name: row.name },
      });
      return row;
    });
    return create(CreateOrganizationResponseSchema, { organization: organizationMessage(organization) });
  };
}
