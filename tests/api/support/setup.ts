import { afterAll, afterEach, expect } from "vitest";
import { takeEventMismatches } from "./event-catalog.js";
import { takeFrameMismatches } from "./realtime-catalog.js";

// Every webhook body a checked receiver got must match the document's `webhooks` (the event
// catalog), and every frame a realtime socket received must match `/asyncapi.json`: one that does
// not fails the test it arrived during, or the file when it arrives last.
const noMismatch = () => {
  expect(takeEventMismatches(), "delivered webhook bodies that /openapi.json's webhooks refuse").toEqual([]);
  expect(takeFrameMismatches(), "realtime frames that /asyncapi.json does not describe").toEqual([]);
};
afterEach(noMismatch);
afterAll(noMismatch);
