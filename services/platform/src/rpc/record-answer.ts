import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AppError,
  forwardedCall,
  lockSubjectData,
  refuseErasedSubject,
  requestContext,
  withTransaction,
  writeAuditRecord,
  writeOutboxEvent,
} from "@evalp/kit";
import {
  type RecordAnswerRequest,
  type RecordAnswerResponse,
  RecordAnswerResponseSchema,
} from "@evalp/proto/platform/v1/continuous";
import { sameJson } from "../content-hash.js";
import { findAnswer, insertAnswer } from "../db/answers.js";
import type { Deps } from "../deps.js";

/**
 * #7: records an answer that arrives outside an interview. The same (environment, subject,
 * program, client_answer_id) again, whatever its Idempotency-Key, returns the first receipt with
 * `idempotent_replay` when the answer is equal, else 409 `client_answer_conflict`. Unknown
 * subjects and programs are 404 (checked with the control plane, which owns them), and so is an
 * unknown delivery (checked with the webhooks plane).
 */
export function recordAnswer(deps: Deps) {
  return async (req: RecordAnswerRequest, ctx: HandlerContext): Promise<RecordAnswerResponse> => {
    const environment = {
      organizationId: req.organizationId,
      appId: req.appId,
      environmentId: req.environmentId,
    };
    await Promise.all([
      deps.control.subjects.getSubject({ environment, subjectId: req.subjectId }, forwardedCall(ctx)),
      deps.control.subjects.getProgram({ environment, programId: req.programId }, forwardedCall(ctx)),
      req.deliveryId
        ? deps.deliveries.getDelivery({ environment, deliveryId: req.deliveryId }, forwardedCall(ctx))
        : null,
    ]);
    const answer = req.answer ?? {};
    const key = {
      environmentId: req.environmentId,
      subjectId: req.subjectId,
      programId: req.programId,
      clientAnswerId: req.clientAnswerId,
    };
    const receipt = await withTransaction(deps.pool, async (tx) => {
      // Control said the subject exists; an erasure that began since must not miss this answer.
      await lockSubjectData(tx, req.subjectId);
      await refuseErasedSubject(tx, req.subjectId);
      const created = await insertAnswer(tx, key, {
        questionId: req.questionId,
        answer,
        answeredAt: req.answeredAt ? timestampDate(req.answeredAt) : null,
        deliveryId: req.deliveryId ?? null,
      });
      if (created) {
        await writeOutboxEvent(tx, {
          type: "continuous_answer.recorded",
          environmentId: req.environmentId,
          data: {
            id: created.id,
            subject_id: req.subjectId,
            program_id: req.programId,
            question_id: req.questionId,
            client_answer_id: req.clientAnswerId,
            answer,
            answered_at: req.answeredAt ? timestampDate(req.answeredAt).toISOString() : null,
          },
        });
        await writeAuditRecord(tx, requestContext(ctx.values), {
          organizationId: req.organizationId,
          appId: req.appId,
          environmentId: req.environmentId,
          action: "continuous_answer.recorded",
          resourceType: "continuous_answer",
          resourceId: created.id,
          metadata: { subject_id: req.subjectId, program_id: req.programId, question_id: req.questionId },
        });
        return { row: created, replay: false };
      }
      const first = await findAnswer(tx, key);
      if (!sameJson(first.answer, answer)) {
        throw new AppError(
          "client_answer_conflict",
          "This client_answer_id was recorded with a different answer.",
          {
            client_answer_id: req.clientAnswerId,
            answer_id: first.id,
          },
        );
      }
      return { row: first, replay: true };
    });
    return create(RecordAnswerResponseSchema, {
      id: receipt.row.id,
      clientAnswerId: receipt.row.client_answer_id,
      questionId: receipt.row.question_id,
      idempotentReplay: receipt.replay,
      deliveryId: receipt.row.delivery_id ?? undefined,
    });
  };
}
