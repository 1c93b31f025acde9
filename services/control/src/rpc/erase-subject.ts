import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { isUuid, notFound, requestContext, withTransaction, writeOutboxEvent } from "@evalp/kit";
import {
  type EraseSubjectRequest,
  type EraseSubjectResponse,
  EraseSubjectResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { writeAudit } from "../db/audit.js";
import { requireEnvironment } from "../db/scope.js";
import { erasureMessage, findErasure, tombstoneSubject } from "../db/subject-erasures.js";
import { findSubject } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/**
 * `DELETE ENV/subjects/{subject_id}` (docs/subjects.md#erasure). In one transaction: control's
 * own part (the subject becomes a tombstone), the erasure's row, an audit record with no personal
 * data, and the `subject.erasure_requested` event that every other plane erases on; so the
 * erasure goes on after any crash, and reaches every replica through the events stream. Asking
 * again answers the erasure as it stands and emits nothing.
 */
export function eraseSubject(deps: Deps) {
  return async (req: EraseSubjectRequest, ctx: HandlerContext): Promise<EraseSubjectResponse> => {
    const ref = req.environment;
    await requireEnvironment(deps.pool, ref);
    if (!ref || !isUuid(req.subjectId)) throw notFound("subject");
    const row = await withTransaction(deps.pool, async (tx) => {
      // The subject's row, locked: two requests at once erase it once.
      const subject = await findSubject(tx, ref.environmentId, req.subjectId, true);
      if (!subject) throw notFound("subject");
      const erasure =
        (await tombstoneSubject(tx, ref, req.subjectId)) ??
        (await findErasure(tx, ref.environmentId, req.subjectId));
      if (!erasure) throw new Error("an erased subject without its erasure");
      if (subject.erased_at) return erasure;
      await writeAudit(tx, requestContext(ctx.values), {
        organizationId: ref.organizationId,
        appId: ref.appId,
        environmentId: ref.environmentId,
        action: "subject.erasure_requested",
        resourceType: "subject",
        resourceId: req.subjectId,
      });
      await writeOutboxEvent(tx, {
        type: "subject.erasure_requested",
        environmentId: ref.environmentId,
        data: { subject_id: req.subjectId, requested_at: erasure.requested_at.toISOString() },
      });
      return erasure;
    });
    return create(EraseSubjectResponseSchema, { erasure: erasureMessage(row) });
  };
}
