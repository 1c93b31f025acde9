import { Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { headersOf, methodAndPath, successStatus } from "./index.js";
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

describe("a route's operation", () => {
  it("is answered with its prose's success status, a repeat's 200 being the handler's to send", () => {
    expect(successStatus({ 200: "The caller." })).toBe(200);
    expect(successStatus({ 204: "The session has ended." })).toBe(204);
    expect(successStatus({ 200: "The first receipt, repeated.", 201: "Recorded." })).toBe(201);
  });

  it("names its method and its path relative to its plugin's prefix", () => {
    expect(methodAndPath("DELETE /evaluations/:evaluation_id")).toEqual({
      method: "DELETE",
      path: "/evaluations/:evaluation_id",
    });
  });
});
