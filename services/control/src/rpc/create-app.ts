import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, isUuid, notFound, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateAppRequest,
  type CreateAppResponse,
  CreateAppResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { writeAudit } from "../db/audit.js";
import { insertApp } from "../db/organizations.js";
import { appMessage } from "../db/rows.js";
import { isUniqueViolation } from "../db/unique.js";
import type { Deps } from "../deps.js";

/** A new app in the organization; its slug is unique within the organization. */
export function createApp(deps: Deps) {
  return async (req: CreateAppRequest, ctx: HandlerContext): Promise<CreateAppResponse> => {
    const context = requestContext(ctx.values);
    if (!isUuid(req.organizationId)) throw notFound("organization");
    try {
      const row = await withTransaction(deps.pool, async (tx) => {
        const app = await insertApp(tx, {
          organizationId: req.organizationId,
          slug: req.slug,
          name: req.name,
          description: req.description ?? null,
        });
        if (!app) throw notFound("organization");
        await writeAudit(tx, context, {
          organizationId: app.organization_id,
          appId: app.id,
          action: "app.created",
          resourceType: "app",
          resourceId: app.id,
          metadata: { slug: app.slug, name: app.name },
        });
        return app;
      });
      return create(CreateAppResponseSchema, { app: appMessage(row) });
    } catch (error) {
      if (isUniqueViolation(error, "apps_organization_id_slug_key")) {
        throw new AppError("already_exists", "An app with this slug already exists.", {
          resource: "app",
          field: "slug",
        });
      }
      throw error;
    }
  };
}
