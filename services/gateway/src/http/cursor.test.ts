import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PagePositionSchema } from "@evalp/proto/common/v1/page";
import { describe, expect, it } from "vitest";
import { createCursorCodec } from "./cursor.js";

const position = create(PagePositionSchema, {
  createdAt: timestampFromDate(new Date("2026-11-25T10:00:00.123Z")),
  id: "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f",
});

describe("cursor codec", () => {
  const codec = createCursorCodec("a-secret-of-at-least-thirty-two-characters");

  it("round-trips a position within 512 characters", () => {
    const cursor = codec.encode("/v1/x", position);
    expect(cursor.length).toBeLessThanOrEqual(512);
    const decoded = codec.decode("/v1/x", cursor);
    expect(decoded?.id).toBe(position.id);
    expect(decoded?.createdAt && timestampDate(decoded.createdAt).toISOString()).toBe(
      "2026-11-25T10:00:00.123Z",
    );
  });

  it("refuses a cursor of another list, another secret, or tampered with", () => {
    const cursor = codec.encode("/v1/x", position);
    expect(codec.decode("/v1/y", cursor)).toBeNull();
    expect(createCursorCodec("another-secret-of-thirty-two-characters!").decode("/v1/x", cursor)).toBeNull();
    const [body, mac] = cursor.split(".");
    const forged = Buffer.from(JSON.stringify(["2020-01-01T00:00:00.000Z", position.id])).toString(
      "base64url",
    );
    expect(codec.decode("/v1/x", `${forged}.${mac}`)).toBeNull();
    expect(codec.decode("/v1/x", `${body}`)).toBeNull();
    expect(codec.decode("/v1/x", "not a cursor")).toBeNull();
  });

  it("gives no next cursor on the last page", () => {
    expect(codec.next("/v1/x", undefined)).toBeNull();
  });
});
