import type { EventEnvelope } from "@evalp/kit";

/** Whether a parsed message is an event envelope (docs/webhooks.md) this plane can deliver. */
export function isEnvelope(value: unknown): value is EventEnvelope {
  const event = value as Partial<EventEnvelope> | null;
  return (
    typeof event === "object" &&
    event !== null &&
    typeof event.id === "string" &&
    typeof event.type === "string" &&
    typeof event.timestamp === "string" &&
    typeof event.environment_id === "string" &&
    typeof event.data === "object" &&
    event.data !== null
  );
}

/**
 * The exact body receivers get: `{"id","type","timestamp","environment_id","data"}` in that
 * order. Built once per event and stored, so that every attempt sends (and signs) the same bytes.
 */
export function eventBody(event: EventEnvelope): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.timestamp,
    environment_id: event.environment_id,
    data: event.data,
  });
}
