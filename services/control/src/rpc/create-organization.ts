import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateOrganizationRequest,
  type CreateOrganizationResponse,
  CreateOrganizationResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { writeAudit } from "../db/audit.js";
import { insertOrganization } from "../db/organizations.js";
import { organizationMessage } from "../db/rows.js";
import { insertMembership } from "../db/users.js";
import type { Deps } from "../deps.js";

/** A new organization whose creator becomes its owner. */
export function createOrganization(deps: Deps) {
  return async (req: CreateOrganizationRequest, ctx: HandlerContext): Promise<CreateOrganizationResponse> => {
    const context = requestContext(ctx.values);
    const organization = await withTransaction(deps.pool, async (tx) => {
      const row = await insertOrganization(tx, newId(), req.name);
      await insertMembership(tx, {
        id: newId(),
        organizationId: row.id,
        userId: req.userId,
        role: "owner",
        status: "active",
      });
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
