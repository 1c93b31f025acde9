import { isUuid } from "../core/ids.js";

/*
 * Arrays sent as one text parameter in Postgres's array syntax (`{a,b}`), cast by the statement
 * (`$1::uuid[]`): node-postgres turns a JS array into that text itself, but quotes and escapes
 * every element on the way (and formats each Date in local time), which showed on the webhooks
 * dispatcher's profile for the few dozen ids of every batch. Ids, numbers and ISO timestamps hold
 * nothing the syntax would need quoted, so a join is the whole conversion.
 */

/**
 * Ids (uuids) as an array literal, for a `::uuid[]` parameter. Anything else throws, as Postgres
 * would: a comma or brace in an element would otherwise split or end the array.
 */
export function idList(ids: readonly string[]): string {
  for (const id of ids) if (!isUuid(id)) throw new TypeError(`not a uuid: ${JSON.stringify(id)}`);
  return `{${ids.join(",")}}`;
}

/** Integers, null as NULL, as an array literal, for an `::int[]` parameter. */
export function intList(values: readonly (number | null)[]): string {
  return `{${values.map((value) => (value === null ? "NULL" : String(value))).join(",")}}`;
}

/** Times as an array literal of ISO 8601 instants (UTC), for a `::timestamptz[]` parameter. */
export function timeList(times: readonly Date[]): string {
  return `{${times.map((time) => time.toISOString()).join(",")}}`;
}
