import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, isUuid, newId, notFound, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateAppRequest,
  type CreateAppResponse,
  CreateAppResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { writeAudit } from "../db/audit.js";
import { APP_COLUMNS, type AppRow, appMessage } from "../db/rows.js";
import { isUniqueViolation } from "../db/unique.js";
import type { Deps } from "../deps.js";

/** A new app in the organization; its slug is unique within the organization. */
export function createApp(deps: Deps) {
  return async (req: CreateAppRequest, ctx: HandlerContext): Promise<CreateAppResponse> => {
    const context = requestContext(ctx.values);
    if (!isUuid(req.organizationId)) throw notFound("organization");
    try {
      const row = await withTransaction(deps.pool, async (tx) => {
        const inserted = await tx.query<AppRow>(
          `INSERT INTO apps (id, organization_id, slug, name, description)
           SELECT $1, id, $3, $4, $5 FROM organizations WHERE id = $2
           RETURNING ${APP_COLUMNS}`,
          [newId(), req.organizationId, req.slug, req.name, req.description ?? null],
        );
        const app = inserted.rows[0];
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
