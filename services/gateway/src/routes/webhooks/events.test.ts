import { AppError } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import { EVENT_CATALOG } from "../../events/catalog.js";
import { CATALOG_TYPES, errorMessage, eventMessage } from "./events.js";

describe("the event stream's messages", () => {
  it("carry an event's id and type, and its body as one data line", () => {
    const body = JSON.stringify(EVENT_CATALOG["subject.imported"].sample);
    const message = eventMessage(body);
    expect(message).toBe(
      `id: ${EVENT_CATALOG["subject.imported"].sample.id}\nevent: subject.imported\ndata: ${body}\n\n`,
    );
    expect(message.split("\n").filter((line) => line.startsWith("data: "))).toHaveLength(1);
  });

  it("end a stream with the contract's error body", () => {
    const message = errorMessage(new AppError("api_key_revoked", "This API key was revoked."), "req-1");
    const [event, data] = message.trimEnd().split("\n");
    expect(event).toBe("event: error");
    expect(JSON.parse(data?.slice("data: ".length) ?? "")).toEqual({
      detail: {
        code: "api_key_revoked",
        message: "This API key was revoked.",
        context: {},
        request_id: "req-1",
      },
    });
  });

  it("may filter on, and trigger, every type of the catalog", () => {
    expect(CATALOG_TYPES).toEqual(Object.keys(EVENT_CATALOG));
    expect(CATALOG_TYPES).not.toContain("*");
  });
});
