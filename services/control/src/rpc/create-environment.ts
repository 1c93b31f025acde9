import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateEnvironmentRequest,
  type CreateEnvironmentResponse,
  CreateEnvironmentResponseSchema,
} from "@evalp/proto/control/v1/organization";
import { writeAudit } from "../db/audit.js";
import { insertEnvironment } from "../db/organizations.js";
import { insertQuotas } from "../db/quotas.js";
import { environmentMessage } from "../db/rows.js";
import { requireApp } from "../db/scope.js";
import { isUniqueViolation } from "../db/unique.js";
import type { Deps } from "../deps.js";

/** A new environment of the app, created with its quotas at their defaults (revision 1). */
export function createEnvironment(deps: Deps) {
  return async (req: CreateEnvironmentRequest, ctx: HandlerContext): Promise<CreateEnvironmentResponse> => {
    const context = requestContext(ctx.values);
    try {
      const row = await withTransaction(deps.pool, async (tx) => {
        await requireApp(tx, req.organizationId, req.appId);
        const environment = await insertEnvironment(tx, { appId: req.appId, slug: req.slug, name: req.name });
        await insertQuotas(tx, environment.id);
        await writeAudit(tx, context, {
          organizationId: req.organizationId,
          appId: req.appId,
          environmentId: environment.id,
          action: "environment.created",
          resourceType: "environment",
          resourceId: environment.id,
          metadata: { slug: environment.slug, name: environment.name },
        });
        return environment;
      });
      return create(CreateEnvironmentResponseSchema, { environment: environmentMessage(row) });
    } catch (error) {
      if (isUniqueViolation(error, "environments_app_id_slug_key")) {
        throw new AppError("already_exists", "An environment with this slug already exists.", {
          resource: "environment",
          field: "slug",
        });
      }
      throw error;
    }
  };
}
