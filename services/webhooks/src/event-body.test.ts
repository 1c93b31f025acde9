import { newId } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import { isEnvelope, isEventTime } from "./event-body.js";

// What the events consumer stores must be what its statement accepts: a message that is not an
// envelope is terminated, where one that failed the statement would hand its whole batch back.
const envelope = (change: Record<string, unknown> = {}) => ({
  id: newId(),
  type: "subject.imported",
  timestamp: new Date().toISOString(),
  environment_id: newId(),
  data: {},
  ...change,
});

describe("event envelopes", () => {
  it("accepts what the planes publish", () => {
    expect(isEnvelope(envelope())).toBe(true);
  });

  it("refuses ids and environments that are not uuids, and times Postgres would not read", () => {
    expect(isEnvelope(envelope({ id: "not-a-uuid" }))).toBe(false);
    expect(isEnvelope(envelope({ environment_id: "" }))).toBe(false);
    expect(isEnvelope(envelope({ timestamp: "2026-02-30T10:00:00Z" }))).toBe(false);
    expect(isEnvelope(envelope({ data: null }))).toBe(false);
    expect(isEnvelope(null)).toBe(false);
  });
});

describe("event times", () => {
  it("reads RFC 3339 times with an offset", () => {
    for (const time of [
      "2026-11-28T07:45:57.123Z",
      "2026-11-28T07:45:57Z",
      "2024-02-29T23:59:59.999999+14:00",
      "0001-01-01T00:00:00-05:30",
    ]) {
      expect(isEventTime(time), time).toBe(true);
    }
  });

  it("refuses days the calendar has not, fields out of range, and times without an offset", () => {
    for (const time of [
      "2025-02-29T00:00:00Z",
      "2026-13-01T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "0000-01-01T00:00:00Z",
      "2026-11-28T24:00:00Z",
      "2026-11-28T23:60:00Z",
      "2026-11-28T23:59:60Z",
      "2026-11-28T07:45:57",
      "2026-11-28T07:45:57+15:00",
      "2026-11-28 07:45:57Z",
      "yesterday",
    ]) {
      expect(isEventTime(time), time).toBe(false);
    }
  });
});
