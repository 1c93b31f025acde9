import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, notFound, requestContext, withTransaction, writeOutboxEvent } from "@evalp/kit";
import {
  type UpdateQuotasRequest,
  type UpdateQuotasResponse,
  UpdateQuotasResponseSchema,
} from "@evalp/proto/control/v1/quota";
import { writeAudit } from "../db/audit.js";
import { COUNTERS, countersFromMessage, QUOTA_COLUMNS, type QuotaRow, quotasMessage } from "../db/quotas.js";
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
    const limits = countersFromMessage(req.limits);
    const quotas = await withTransaction(deps.pool, async (tx) => {
      await requireEnvironment(tx, req.environment);
      const assignments = COUNTERS.map((counter, index) => `${counter} = $${index + 3}`).join(", ");
      const updated = await tx.query<QuotaRow>(
        `UPDATE quotas SET ${assignments}, revision = revision + 1,
           updated_at = date_trunc('milliseconds', clock_timestamp())
         WHERE environment_id = $1 AND revision = $2 RETURNING ${QUOTA_COLUMNS}`,
        [environmentId, req.expectedRevision, ...COUNTERS.map((counter) => limits[counter])],
      );
      const row = updated.rows[0];
      if (!row) {
        const current = await tx.query<{ revision: number }>(
          "SELECT revision FROM quotas WHERE environment_id = $1",
          [environmentId],
        );
        if (!current.rows[0]) throw notFound("environment");
        throw new AppError("revision_conflict", "The quotas changed since that revision.", {
          expected_revision: req.expectedRevision,
          current_revision: current.rows[0].revision,
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
