import { v7 } from "uuid";

/** A new time-ordered id (UUID v7), the form of every id the interface calls uuid. */
export function newId(): string {
  return v7();
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a well-formed UUID; path ids that are not answer 404 rather than reach the database. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
