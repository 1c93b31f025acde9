import { type EventEnvelope, isUuid } from "@evalp/kit";

/**
 * Whether a parsed message is an event envelope (docs/webhooks.md) this plane can deliver: its id
 * and environment uuids and its time one Postgres reads. A message that is not is refused (the
 * consumer terminates it) rather than failing the statement that stores its batch, which would
 * hand the whole batch back, again and again, with every valid event beside it.
 */
export function isEnvelope(value: unknown): value is EventEnvelope {
  const event = value as Partial<EventEnvelope> | null;
  return (
    typeof event === "object" &&
    event !== null &&
    typeof event.id === "string" &&
    isUuid(event.id) &&
    typeof event.type === "string" &&
    typeof event.timestamp === "string" &&
    isEventTime(event.timestamp) &&
    typeof event.environment_id === "string" &&
    isUuid(event.environment_id) &&
    typeof event.data === "object" &&
    event.data !== null
  );
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.\d{1,6})?(?:Z|[+-](\d{2}):(\d{2}))$/;

/** An RFC 3339 time with its offset and a day the calendar has (what every plane writes, `toISOString`). */
export function isEventTime(value: string): boolean {
  const match = RFC3339.exec(value);
  if (!match) return false;
  // Groups 1–6 are always there once it matched; the offset's are not for `Z`. The defaults only type them.
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] =
    match.slice(1).map((field) => Number(field ?? 0));
  const calendar = new Date(0);
  calendar.setUTCFullYear(year, month - 1, day);
  return (
    year >= 1 &&
    calendar.getUTCMonth() === month - 1 &&
    calendar.getUTCDate() === day &&
    hour < 24 &&
    minute < 60 &&
    second < 60 &&
    offsetHours < 15 &&
    offsetMinutes < 60
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
