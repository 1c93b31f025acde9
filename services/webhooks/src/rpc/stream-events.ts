import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { Code } from "@connectrpc/connect";
import { AppError, toConnectError } from "@evalp/kit";
import {
  type StreamEventsRequest,
  type StreamEventsResponse,
  StreamEventsResponseSchema,
} from "@evalp/proto/webhooks/v1/live_events";
import type { Deps } from "../deps.js";
import { isEventTypeName } from "../live-events.js";

/** The most event types one stream may filter on (as an endpoint's `event_types`). */
const MAX_TYPES = 50;

/**
 * `GET ENV/events/stream`: the environment's events from now on, each the body a delivery sends,
 * and an empty body as a heartbeat, until the gateway (its client gone) cancels the call.
 */
export function streamEvents(deps: Pick<Deps, "requireEnvironmentId" | "live" | "logger">) {
  return async function* (
    req: StreamEventsRequest,
    ctx: HandlerContext,
  ): AsyncGenerator<StreamEventsResponse> {
    // The error interceptor sees only how a stream starts: what fails later is typed here.
    try {
      const environmentId = await deps.requireEnvironmentId(req.environment, ctx);
      const types = [...new Set(req.eventTypes)];
      if (types.length > MAX_TYPES || !types.every(isEventTypeName)) {
        throw new AppError("validation_error", "event_types must name event types.", {
          field: "event_types",
        });
      }
      for await (const body of deps.live.follow(environmentId, types, ctx.signal)) {
        yield create(StreamEventsResponseSchema, { body });
      }
    } catch (error) {
      const typed = toConnectError(error);
      if (typed.code === Code.Internal) deps.logger.error({ err: error }, "event stream failed");
      throw typed;
    }
  };
}
