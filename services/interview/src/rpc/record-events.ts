import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, forwardedCall, withTransaction } from "@evalp/kit";
import {
  type RecordEventsRequest,
  type RecordEventsResponse,
  RecordEventsResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import { insertEventBatch } from "../db/behavioral-events.js";
import type { Deps } from "../deps.js";
import { requireSession } from "../participant-scope.js";

/**
 * `POST /v1/participant/interview/events`: a batch of behavioral events, at most the
 * environment's `behavioral_event_batch_size` (else 422 `batch_too_large` with `context.limit`).
 * The batch is kept as a row too: the largest accepted is that counter's usage. Events are
 * accepted whatever the interview's status (late telemetry of a finished interview included).
 */
export function recordEvents(deps: Deps) {
  return async (req: RecordEventsRequest, ctx: HandlerContext): Promise<RecordEventsResponse> => {
    const session = await requireSession(deps.pool, req.participant);
    const environmentId = session.evaluation.environment_id;
    const limits = await deps.control.quotas.getLimits({ environmentId }, forwardedCall(ctx));
    const limit = Number(limits.limits?.behavioralEventBatchSize ?? 0n);
    if (req.events.length > limit) {
      throw new AppError("batch_too_large", `A batch holds at most ${limit} events.`, {
        limit,
        size: req.events.length,
      });
    }
    await withTransaction(deps.pool, async (tx) => {
      await insertEventBatch(tx, {
        environmentId,
        evaluationId: session.evaluation.id,
        sessionId: session.sessionId,
        events: req.events.map((event) => ({
          type: event.type,
          occurredAt: event.occurredAt ? timestampDate(event.occurredAt) : new Date(),
          questionId: event.questionId ?? null,
          elapsedMs: event.elapsedMs ?? null,
        })),
      });
    });
    return create(RecordEventsResponseSchema, { accepted: req.events.length });
  };
}
