import type { JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { FreeObject, nullable, ref, wireOf } from "./wire.js";

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

/** A message `Thing` is read from, as the RPC types declare one: fields it may leave unset are optional. */
type ThingMessage = {
  id: string;
  parentId?: string;
  createdAt?: Timestamp;
  endedAt?: Timestamp;
  seq: number | bigint;
  profile?: JsonObject;
  items: Array<{ itemName: string }>;
};

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
    const message: ThingMessage = { id: "t1", createdAt: timestampFromDate(new Date(0)), seq: 1, items: [] };
    const answer = thingJson(message);
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

  it("maps a named schema it refers to as that schema, and refuses a reference it cannot see", () => {
    const Holder = Type.Object({ thing: ref(Thing), things: Type.Array(ref(Thing)) });
    const thing: ThingMessage = { id: "t1", createdAt: timestampFromDate(new Date(0)), seq: 2n, items: [] };
    expect(wireOf(Holder)({ thing, things: [thing] })).toEqual({
      thing: {
        id: "t1",
        parent_id: null,
        created_at: "1970-01-01T00:00:00.000Z",
        seq: 2,
        profile: {},
        items: [],
      },
      things: [
        { id: "t1", parent_id: null, created_at: "1970-01-01T00:00:00.000Z", seq: 2, profile: {}, items: [] },
      ],
    });
    expect(() => wireOf(Type.Object({ thing: Type.Unsafe(Type.Ref("Thing")) }))).toThrow(/refers to Thing/);
  });

  it("refuses a missing message, and a date-time that is not a timestamp", () => {
    const thing: ThingMessage = { id: "t1", createdAt: timestampFromDate(new Date(0)), seq: 1, items: [] };
    expect(() => thingJson(undefined)).toThrow("upstream returned no Thing");
    // The types cannot tell a date-time's string from another: the mapper refuses it when it runs.
    const message = { ...thing, createdAt: "2026-01-05" };
    expect(() => thingJson(message)).toThrow("no timestamp at Thing.created_at");
  });

  it("is typed so that a message lacking a field the schema reads does not compile", () => {
    const { parentId: _, ...lacking }: ThingMessage = { id: "t1", seq: 1, items: [] };
    // @ts-expect-error: `parentId` is not a field of the message
    expect(() => thingJson(lacking)).not.toThrow();
  });
});
