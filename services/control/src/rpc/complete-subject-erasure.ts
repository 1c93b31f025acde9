import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, CALLER_HEADER, isUuid, notFound, withTransaction, writeOutboxEvent } from "@evalp/kit";
import {
  type CompleteSubjectErasureRequest,
  type CompleteSubjectErasureResponse,
  CompleteSubjectErasureResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { erasureMessage, findErasure, isErasingPlane, markPlaneErased } from "../db/subject-erasures.js";
import type { Deps } from "../deps.js";

/**
 * A plane reports that it erased what it held about a subject (its erasure consumer, after its
 * own transaction committed). The report that makes every plane done completes the erasure and
 * emits `subject.erased` (ids and times only) in the same transaction: once, however often the
 * planes report (a redelivered event reports again).
 */
export function completeSubjectErasure(deps: Deps) {
  return async (
    req: CompleteSubjectErasureRequest,
    ctx: HandlerContext,
  ): Promise<CompleteSubjectErasureResponse> => {
    const plane = req.plane;
    // Refusals in the contract's codes: a bare ConnectError would leave the service as
    // `internal` (kit's errorInterceptor), logged as a bug.
    if (!isErasingPlane(plane)) {
      throw new AppError("validation_error", `No plane erases as ${JSON.stringify(plane)}.`, {
        detail: [
          {
            type: "value_error",
            loc: ["body", "plane"],
            msg: "Value error, no such erasing plane",
            input: plane,
            ctx: {},
          },
        ],
      });
    }
    // A plane reports for itself only: the caller its service token proves.
    if (ctx.requestHeader.get(CALLER_HEADER) !== plane) {
      throw new AppError("forbidden", `Only the ${plane} plane reports its erasure.`, {});
    }
    if (!isUuid(req.subjectId) || !isUuid(req.environmentId)) throw notFound("subject_erasure");
    const row = await withTransaction(deps.pool, async (tx) => {
      if (!(await findErasure(tx, req.environmentId, req.subjectId, true))) throw notFound("subject_erasure");
      const marked = await markPlaneErased(tx, req.subjectId, plane);
      if (!marked) throw notFound("subject_erasure");
      if (marked.completedNow && marked.row.completed_at) {
        await writeOutboxEvent(tx, {
          type: "subject.erased",
          environmentId: marked.row.environment_id,
          data: {
            subject_id: marked.row.subject_id,
            requested_at: marked.row.requested_at.toISOString(),
            completed_at: marked.row.completed_at.toISOString(),
          },
        });
      }
      return marked.row;
    });
    return create(CompleteSubjectErasureResponseSchema, { erasure: erasureMessage(row) });
  };
}
