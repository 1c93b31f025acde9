import { type Timestamp, timestampDate } from "@bufbuild/protobuf/wkt";

/** RFC 3339 UTC with milliseconds (docs/http.md), from a wire timestamp. */
export function iso(timestamp: Timestamp | undefined): string {
  if (!timestamp) throw new Error("timestamp missing from an upstream response");
  return timestampDate(timestamp).toISOString();
}

/** Like `iso` but for optional timestamps, which the API shows as null. */
export function isoOrNull(timestamp: Timestamp | undefined): string | null {
  return timestamp ? iso(timestamp) : null;
}
