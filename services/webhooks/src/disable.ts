import { type Queryable, writeOutboxEvent } from "@evalp/kit";
import { deadLetterWaiting } from "./db/deliveries.js";
import { markDisabled } from "./db/endpoints.js";

/** Why an endpoint stopped: a client's PATCH, a receiver's `410 Gone`, or 5 days of failures. */
export type DisableReason = "requested" | "gone" | "failing";

/** `last_error` of the deliveries a disabling ends (docs/webhooks.md). */
export const ENDPOINT_DISABLED = "endpoint disabled";

/**
 * Disables an endpoint (if it is enabled) in the caller's transaction: sets `disabled_at`, turns
 * its waiting deliveries `dead_letter` with `endpoint disabled`, and, when the platform rather
 * than the client disabled it, emits `webhook.endpoint_disabled` into its environment. Returns
 * whether this call disabled it.
 */
export async function disableEndpoint(
  db: Queryable,
  endpointId: string,
  reason: DisableReason,
): Promise<boolean> {
  const row = await markDisabled(db, endpointId, reason);
  if (!row) return false;
  await deadLetterWaiting(db, endpointId, ENDPOINT_DISABLED);
  if (reason !== "requested") {
    await writeOutboxEvent(db, {
      type: "webhook.endpoint_disabled",
      environmentId: row.environment_id,
      data: {
        endpoint_id: endpointId,
        reason,
        disabled_at: row.disabled_at.toISOString(),
        failing_since: row.failing_since?.toISOString() ?? null,
      },
    });
  }
  return true;
}
