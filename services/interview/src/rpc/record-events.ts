import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, newId, withTransaction } from "@evalp/kit";
import {
  type RecordEventsRequest,
  type RecordEventsResponse,
  RecordEventsResponseSchema,
} from "@evalp/proto/interview/v1/participant";
import type { Deps } from "../deps.js";
import { forwardedCall } from "../environment-scope.js";
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
      const batchId = newId();
      await tx.query(
        `INSERT INTO behavioral_event_batches (id, environment_id, evaluation_id, session_id, size)
         VALUES ($1, $2, $3, $4, $5)`,
        [batchId, environmentId, session.evaluation.id, session.sessionId, req.events.length],
      );
      const columns = ["id", "batch_id", "evaluation_id", "type", "occurred_at", "question_id", "elapsed_ms"];
      const values: unknown[] = [];
      const rows = req.events.map((event, i) => {
        values.push(
          newId(),
          batchId,
          session.evaluation.id,
          event.type,
          event.occurredAt ? timestampDate(event.occurredAt) : new Date(),
          event.questionId ?? null,
          event.elapsedMs ?? null,
        );
        return `(${columns.map((_, k) => `$${i * columns.length + k + 1}`).join(", ")})`;
      });
      await tx.query(
        `INSERT INTO behavioral_events (${columns.join(", ")}) VALUES ${rows.join(", ")}`,
        values,
      );
    });
    return create(RecordEventsResponseSchema, { accepted: req.events.length });
  };
}
