import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { ref } from "./schemas.js";
import { FreeObject, nullable, wireOf } from "./wire.js";

const Thing = Type.Object(
  {
    id: Type.String(),
    parent_id: nullable(Type.String()),
    created_at: Type.String({ format: "date-time" }),
    ended_at: Type.Optional(Type.String({ format: "date-time" })),
    seq: Type.Integer(),
    profile: FreeObject,
    items: Type.Array(Type.Object({ item_name: Type.String() })),
  },
  { $id: "Thing" },
);

describe("wireOf", () => {
  const thingJson = wireOf(Thing);

  it("renames fields to snake case, writes timestamps in RFC 3339 and 64-bit counts as numbers", () => {
    const at = new Date("2026-01-05T10:00:00.123Z");
    expect(
      thingJson({
        id: "t1",
        parentId: "p1",
        createdAt: timestampFromDate(at),
        endedAt: timestampFromDate(at),
        seq: 7n,
        profile: { a: 1 },
        items: [{ itemName: "x" }],
      }),
    ).toEqual({
      id: "t1",
      parent_id: "p1",
      created_at: "2026-01-05T10:00:00.123Z",
      ended_at: "2026-01-05T10:00:00.123Z",
      seq: 7,
      profile: { a: 1 },
      items: [{ item_name: "x" }],
    });
  });

  it("answers an absent field as null where it may be null, {} for a free object, and leaves out an optional one", () => {
    const answer = thingJson({ id: "t1", createdAt: timestampFromDate(new Date(0)), seq: 1, items: [] });
    expect(answer).toEqual({
      id: "t1",
      parent_id: null,
      created_at: "1970-01-01T00:00:00.000Z",
      seq: 1,
      profile: {},
      items: [],
    });
    expect(answer).not.toHaveProperty("ended_at");
  });

  it("refuses a missing message, and a schema that refers to another (mapped by hand)", () => {
    expect(() => thingJson(undefined)).toThrow("upstream returned no Thing");
    expect(() => wireOf(Type.Object({ thing: ref(Thing) }))).toThrow(/refers to Thing/);
  });
});
