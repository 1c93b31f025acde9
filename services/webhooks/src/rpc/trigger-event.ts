import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { AppError, withTransaction, writeOutboxEvent } from "@evalp/kit";
import {
  type TriggerEventRequest,
  type TriggerEventResponse,
  TriggerEventResponseSchema,
} from "@evalp/proto/webhooks/v1/live_events";
import { auditWebhooks } from "../audit.js";
import type { Deps } from "../deps.js";
import { eventBody } from "../event-body.js";
import { isEventTypeName } from "../live-events.js";

/**
 * `POST ENV/events/trigger`: emits an event of the type asked for with the `data` given (the
 * gateway sends the catalog's sample) through this plane's outbox, so that it is published,
 * streamed to listeners and delivered to subscribed endpoints as any event is. Audited.
 */
export function triggerEvent(deps: Pick<Deps, "pool" | "requireEnvironmentId">) {
  return async (req: TriggerEventRequest, ctx: HandlerContext): Promise<TriggerEventResponse> => {
    const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
    if (!isEventTypeName(req.type)) {
      throw new AppError("validation_error", "type must name an event type.", { field: "type" });
    }
    const data = req.data ?? {};
    const event = await withTransaction(deps.pool, async (tx) => {
      const written = await writeOutboxEvent(tx, { type: req.type, environmentId, data });
      await auditWebhooks(tx, ctx, req.environment, {
        action: "event.triggered",
        resourceType: "event",
        resourceId: written.id,
        metadata: { type: req.type },
      });
      return written;
    });
    return create(TriggerEventResponseSchema, { body: eventBody(event) });
  };
}
