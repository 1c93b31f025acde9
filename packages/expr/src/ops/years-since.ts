import { parseIsoDate, wholeYearsBetween } from "../iso-date.js";
import type { JsonValue } from "../json.js";

/**
 * `years_since` on its evaluated date and as-of value (the evaluator supplies the default as-of:
 * `context.as_of`, else today in UTC). Anything that is not a parsable, possible ISO date or RFC 3339
 * date-time, non-strings and nulls included, gives null; it is not a type error (docs/expressions.md names
 * "unparsable → null" and lists no type error for this op). A date after `as_of` gives a negative
 * count, truncated toward zero.
 */
export function applyYearsSince(date: JsonValue, asOf: JsonValue): number | null {
  if (typeof date !== "string" || typeof asOf !== "string") return null;
  const from = parseIsoDate(date);
  const to = parseIsoDate(asOf);
  if (from === null || to === null) return null;
  return wholeYearsBetween(from, to);
}
