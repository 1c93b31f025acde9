import { contextFromCarrier, withSpan } from "@evalp/kit";
import { trace } from "@opentelemetry/api";
import type { ClaimedDelivery } from "./db/delivery-attempts.js";
import type { AttemptResult } from "./retry.js";

/**
 * Runs one delivery attempt in a span under the trace of its event (the delivery's
 * `trace_context`), so the attempt, and the POST in it, belong to the API call that caused it.
 */
export function traceAttempt(delivery: ClaimedDelivery, attempt: () => Promise<void>): Promise<void> {
  return withSpan(
    "webhook attempt",
    {
      parent: contextFromCarrier(delivery.trace_context),
      attributes: {
        "evalp.webhook.endpoint_id": delivery.endpoint_id,
        "evalp.webhook.delivery_id": delivery.id,
        "evalp.event.id": delivery.event_id,
        "evalp.webhook.attempt": delivery.attempt_count + 1,
      },
    },
    attempt,
  );
}

/**
 * What became of the attempt in progress, on its span: `succeeded`, `failed` (with the status or
 * the error), `aborted` (shutdown: it is attempted again) or `not_sent` (the endpoint is disabled
 * or deleted).
 */
export function attemptOutcome(
  outcome: "succeeded" | "failed" | "aborted" | "not_sent",
  result?: AttemptResult,
): void {
  const span = trace.getActiveSpan();
  if (!span) return;
  span.setAttribute("evalp.webhook.outcome", outcome);
  if (result?.status !== undefined) span.setAttribute("http.response.status_code", result.status);
  if (result && !result.ok && result.error) span.setAttribute("error.type", result.error);
}
