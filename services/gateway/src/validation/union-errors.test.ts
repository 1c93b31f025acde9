import { Type } from "@sinclair/typebox";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { collapseUnions } from "./union-errors.js";

const ajv = new Ajv({ allErrors: true, strict: false });

function errorsOf(schema: object, data: unknown) {
  const check = ajv.compile(schema);
  expect(check(data)).toBe(false);
  return check.errors ?? [];
}

describe("collapseUnions", () => {
  it("folds a union of literals into one const error listing every value", () => {
    const errors = errorsOf(Type.Union([Type.Literal("x"), Type.Literal(2), Type.Null()]), "z");
    expect(collapseUnions(errors)).toEqual([
      expect.objectContaining({ keyword: "const", instancePath: "", params: { allowedValues: ["x", 2] } }),
    ]);
  });

  it("keeps the errors of the only non-null branch", () => {
    const errors = errorsOf(Type.Object({ a: Type.Union([Type.String({ minLength: 3 }), Type.Null()]) }), {
      a: "x",
    });
    expect(collapseUnions(errors).map((error) => [error.instancePath, error.keyword])).toEqual([
      ["/a", "minLength"],
    ]);
  });

  it("collapses nested unions from the inside out", () => {
    const inner = Type.Union([Type.Literal("a"), Type.Literal("b")]);
    const errors = errorsOf(Type.Union([Type.Array(inner), Type.Null()]), ["a", "c"]);
    expect(collapseUnions(errors)).toEqual([
      expect.objectContaining({
        keyword: "const",
        instancePath: "/1",
        params: { allowedValues: ["a", "b"] },
      }),
    ]);
  });

  it("leaves a oneOf that matched twice as it is", () => {
    const errors = errorsOf({ oneOf: [{ type: "integer" }, { type: "number" }] }, 1);
    expect(collapseUnions(errors)).toEqual(errors);
  });

  it("leaves errors outside unions alone", () => {
    const errors = errorsOf(Type.Object({ a: Type.String() }), { a: 1 });
    expect(collapseUnions(errors)).toEqual(errors);
  });
});
