import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { headersOf } from "./index.js";
import { IdempotentHeaders, OptionalIdempotencyHeaders } from "./wire.js";

describe("a route's headers", () => {
  it("are the Idempotency-Key its access declares, required or optional, and none on a read", () => {
    const access = { auth: "operator" } as const;
    expect(headersOf({ method: "POST", access: { ...access, idempotency: "required" } })).toEqual({
      headers: IdempotentHeaders,
    });
    expect(headersOf({ method: "PATCH", access: { ...access, idempotency: "optional" } })).toEqual({
      headers: OptionalIdempotencyHeaders,
    });
    expect(headersOf({ method: "POST", access })).toEqual({});
    expect(headersOf({ method: "GET", access: { ...access, idempotency: "required" } })).toEqual({});
  });

  it("keep a route's own headers beside the Idempotency-Key", () => {
    const own = Type.Object({ "x-signature": Type.String() });
    const { headers } = headersOf({
      method: "POST",
      access: { auth: "none", idempotency: "required" },
      headers: own,
    });
    expect(headers?.required).toEqual(expect.arrayContaining(["x-signature", "idempotency-key"]));
  });
});
