import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AppError,
  notFound,
  quotaValues,
  requestContext,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import {
  type UpdateQuotasRequest,
  type UpdateQuotasResponse,
  UpdateQuotasResponseSchema,
} from "@evalp/proto/control/v1/quota";
import { writeAudit } from "../db/audit.js";
import { quotaRevision, quotasMessage, replaceLimits } from "../db/quotas.js";
import { requireEnvironment } from "../db/scope.js";
import type { Deps } from "../deps.js";

/**
 * Replaces all seven limits when `expected_revision` is the current one. The check and the
 * write are one UPDATE, so of two concurrent updates with the same revision exactly one wins
 * and the other gets 409 `revision_conflict` with both revisions.
 */
export function updateQuotas(deps: Deps) {
  return async (req: UpdateQuotasRequest, ctx: HandlerContext): Promise<UpdateQuotasResponse> => {
    const context = requestContext(ctx.values);
    const environmentId = req.environment?.environmentId ?? "";
    const limits = quotaValues(req.limits);
    const quotas = await withTransaction(deps.pool, async (tx) => {
      await requireEnvironment(tx, req.environment);
      const row = await replaceLimits(tx, environmentId, req.expectedRevision, limits);
      if (!row) {
        const current = await quotaRevision(tx, environmentId);
        if (current === undefined) throw notFound("environment");
        throw new AppError("revision_conflict", "The quotas changed since that revision.", {
          expected_revision: req.expectedRevision,
          current_revision: current,
        });
      }
      await writeAudit(tx, context, {
        organizationId: req.environment?.organizationId ?? "",
        appId: req.environment?.appId,
        environmentId,
        action: "quota.updated",
        resourceType: "quota",
        resourceId: environmentId,
        metadata: { revision: row.revision, limits },
      });
      await writeOutboxEvent(tx, {
        type: "quota.updated",
        environmentId,
        data: { environment_id: environmentId, revision: row.revision, limits },
      });
      return quotasMessage(tx, row, deps.usage);
    });
    return create(UpdateQuotasResponseSchema, { quotas });
  };
}
