import { type TSchema, Type } from "@sinclair/typebox";
import { Ajv } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { ajvErrorsToPydantic, type Location } from "./pydantic-errors.js";
import { StringEnum } from "./request-validator.js";

// A plain Ajv without coercion: the converter sees exactly what the client sent, strings included.
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);

function validate(schema: TSchema | object, data: unknown, location: Location = "body") {
  const check = ajv.compile(schema);
  expect(check(data)).toBe(false);
  return ajvErrorsToPydantic(check.errors ?? [], location, data, schema);
}

/** The single item for one field `value` of `schema`, at loc ["body", "value"]. */
function field(schema: TSchema, value: unknown, location: Location = "body") {
  const items = validate(Type.Object({ value: schema }), { value }, location);
  expect(items).toHaveLength(1);
  expect(items[0]?.loc).toEqual([location, "value"]);
  return items[0];
}

const Member = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320 }),
    role: Type.Optional(StringEnum(["owner", "admin", "member", "viewer"])),
  },
  { additionalProperties: false },
);

const Batch = Type.Object({
  items: Type.Array(Type.Object({ external_id: Type.String({ minLength: 1, maxLength: 255 }) }), {
    minItems: 1,
    maxItems: 100,
  }),
});

describe("ajvErrorsToPydantic: objects", () => {
  it("reports a missing field with the object that lacks it, an enum miss and an extra key", () => {
    const body = { role: "x", extra: 1 };
    expect(validate(Member, body)).toEqual([
      { type: "missing", loc: ["body", "email"], msg: "Field required", input: body, ctx: {} },
      {
        type: "enum",
        loc: ["body", "role"],
        msg: "Input should be 'owner', 'admin', 'member' or 'viewer'",
        input: "x",
        ctx: { expected: "'owner', 'admin', 'member' or 'viewer'" },
      },
      {
        type: "extra_forbidden",
        loc: ["body", "extra"],
        msg: "Extra inputs are not permitted",
        input: 1,
        ctx: {},
      },
    ]);
  });

  it("reports a body that is not an object at loc ['body']", () => {
    expect(validate(Member, [1])).toEqual([
      { type: "dict_type", loc: ["body"], msg: "Input should be a valid dictionary", input: [1], ctx: {} },
    ]);
  });

  it("reports nested problems with every loc element a string", () => {
    const items = [{ external_id: "a" }, {}, { external_id: "b" }, { external_id: "" }];
    expect(validate(Batch, { items })).toEqual([
      {
        type: "missing",
        loc: ["body", "items", "1", "external_id"],
        msg: "Field required",
        input: {},
        ctx: {},
      },
      {
        type: "string_too_short",
        loc: ["body", "items", "3", "external_id"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
    ]);
  });

  it("follows the schema's field order, not Ajv's (which reports missing fields first)", () => {
    const schema = Type.Object({ a: Type.String(), b: Type.Integer(), c: Type.String() });
    expect(validate(schema, { a: 1, c: 2 }).map((item) => item.loc)).toEqual([
      ["body", "a"],
      ["body", "b"],
      ["body", "c"],
    ]);
  });

  it("unescapes JSON pointer segments", () => {
    const schema = Type.Object({ "a/b~c": Type.String() });
    expect(validate(schema, { "a/b~c": 1 })[0]?.loc).toEqual(["body", "a/b~c"]);
  });

  it("counts the keys of a dictionary that is too small", () => {
    expect(field(Type.Record(Type.String(), Type.String(), { minProperties: 1 }), {})).toMatchObject({
      type: "too_short",
      msg: "Dictionary should have at least 1 item after validation, not 0",
      ctx: { field_type: "Dictionary", min_length: 1, actual_length: 0 },
    });
  });
});

describe("ajvErrorsToPydantic: strings", () => {
  it("reports a value that is not a string", () => {
    expect(field(Type.String(), 5)).toEqual({
      type: "string_type",
      loc: ["body", "value"],
      msg: "Input should be a valid string",
      input: 5,
      ctx: {},
    });
  });

  it.each([
    [
      { minLength: 3 },
      "a",
      "string_too_short",
      "String should have at least 3 characters",
      { min_length: 3 },
    ],
    [{ minLength: 1 }, "", "string_too_short", "String should have at least 1 character", { min_length: 1 }],
    [
      { maxLength: 320 },
      "x".repeat(321),
      "string_too_long",
      "String should have at most 320 characters",
      { max_length: 320 },
    ],
    [{ maxLength: 1 }, "ab", "string_too_long", "String should have at most 1 character", { max_length: 1 }],
    [
      { pattern: "^[a-z]+$" },
      "A1",
      "string_pattern_mismatch",
      "String should match pattern '^[a-z]+$'",
      { pattern: "^[a-z]+$" },
    ],
  ])("%j rejects %j as %s", (options, value, type, msg, ctx) => {
    expect(field(Type.String(options), value)).toEqual({
      type,
      loc: ["body", "value"],
      msg,
      ctx,
      input: value,
    });
  });

  it("keeps one problem per loc: length before pattern before format", () => {
    expect(field(Type.String({ minLength: 5, pattern: "^[a-z]+$" }), "A1")?.type).toBe("string_too_short");
    expect(field(Type.String({ maxLength: 3, format: "uuid" }), "not-a-uuid")?.type).toBe("string_too_long");
    expect(field(Type.String({ pattern: "^x", format: "email" }), "nope")?.type).toBe(
      "string_pattern_mismatch",
    );
  });
});

describe("ajvErrorsToPydantic: numbers and booleans", () => {
  it("calls a JSON body value of the wrong type a type error, whatever it looks like", () => {
    expect(field(Type.Integer(), "5")).toMatchObject({
      type: "int_type",
      msg: "Input should be a valid integer",
    });
    expect(field(Type.Integer(), 1.5)).toMatchObject({ type: "int_type", input: 1.5 });
    expect(field(Type.Number(), "abc")).toMatchObject({
      type: "float_type",
      msg: "Input should be a valid number",
    });
    expect(field(Type.Boolean(), "yes")).toMatchObject({
      type: "bool_type",
      msg: "Input should be a valid boolean",
    });
  });

  it("calls a query, path or header string that does not parse a parsing error", () => {
    expect(field(Type.Integer(), "abc", "query")).toEqual({
      type: "int_parsing",
      loc: ["query", "value"],
      msg: "Input should be a valid integer, unable to parse string as an integer",
      input: "abc",
      ctx: {},
    });
    expect(field(Type.Integer(), "1.5", "path")).toMatchObject({ type: "int_parsing", input: "1.5" });
    expect(field(Type.Number(), "x", "query")).toMatchObject({
      type: "float_parsing",
      msg: "Input should be a valid number, unable to parse string as a number",
    });
    expect(field(Type.Boolean(), "maybe", "query")).toMatchObject({
      type: "bool_parsing",
      msg: "Input should be a valid boolean, unable to interpret input",
    });
  });

  it.each([
    [{ minimum: 1 }, 0, "greater_than_equal", "Input should be greater than or equal to 1", { ge: 1 }],
    [{ maximum: 100 }, 101, "less_than_equal", "Input should be less than or equal to 100", { le: 100 }],
    [{ exclusiveMinimum: 0 }, 0, "greater_than", "Input should be greater than 0", { gt: 0 }],
    [{ exclusiveMaximum: 1 }, 1, "less_than", "Input should be less than 1", { lt: 1 }],
    [{ multipleOf: 5 }, 7, "multiple_of", "Input should be a multiple of 5", { multiple_of: 5 }],
    [
      { minimum: 0.5 },
      0.25,
      "greater_than_equal",
      "Input should be greater than or equal to 0.5",
      { ge: 0.5 },
    ],
  ])("%j rejects %j as %s", (options, value, type, msg, ctx) => {
    expect(field(Type.Number(options), value)).toEqual({
      type,
      loc: ["body", "value"],
      msg,
      ctx,
      input: value,
    });
  });

  it("prefers the type error to the bounds", () => {
    expect(field(Type.Integer({ minimum: 1 }), 0.5)?.type).toBe("int_type");
  });
});

describe("ajvErrorsToPydantic: arrays", () => {
  const items = Batch.properties.items;

  it("reports too few and too many items with Pydantic's ctx", () => {
    expect(field(items, [])).toEqual({
      type: "too_short",
      loc: ["body", "value"],
      msg: "List should have at least 1 item after validation, not 0",
      input: [],
      ctx: { field_type: "List", min_length: 1, actual_length: 0 },
    });
    const many = Array.from({ length: 101 }, () => ({ external_id: "a" }));
    expect(field(items, many)).toEqual({
      type: "too_long",
      loc: ["body", "value"],
      msg: "List should have at most 100 items after validation, not 101",
      input: many,
      ctx: { field_type: "List", max_length: 100, actual_length: 101 },
    });
  });

  it("pluralises the minimum", () => {
    expect(field(Type.Array(Type.Integer(), { minItems: 2 }), [1])?.msg).toBe(
      "List should have at least 2 items after validation, not 1",
    );
  });

  it("reports a value that is not a list", () => {
    expect(field(items, "x")).toMatchObject({
      type: "list_type",
      msg: "Input should be a valid list",
      input: "x",
    });
  });
});

describe("ajvErrorsToPydantic: formats", () => {
  it("reports a bad UUID with the uuid crate's reason", () => {
    expect(field(Type.String({ format: "uuid" }), "xyz")).toEqual({
      type: "uuid_parsing",
      loc: ["body", "value"],
      msg: "Input should be a valid UUID, invalid character: found `x` at 1",
      input: "xyz",
      ctx: { error: "invalid character: found `x` at 1" },
    });
    expect(field(Type.String({ format: "uuid" }), "1234")?.msg).toBe(
      "Input should be a valid UUID, invalid length: expected length 32 for simple format, found 4",
    );
  });

  it("reports a bad date-time as Pydantic's lax datetime-or-date failure", () => {
    const schema = Type.String({ format: "date-time" });
    expect(field(schema, "2024")).toEqual({
      type: "datetime_from_date_parsing",
      loc: ["body", "value"],
      msg: "Input should be a valid datetime or date, input is too short",
      input: "2024",
      ctx: { error: "input is too short" },
    });
    expect(field(schema, "2024-01-01T25:00:00Z")?.ctx).toEqual({
      error: "unexpected extra characters at the end of the input",
    });
    expect(field(schema, "2024-13-01T00:00:00Z")?.ctx).toEqual({
      error: "month value is outside expected range of 1-12",
    });
  });

  it("reports a date-time without an offset as lacking timezone info", () => {
    expect(field(Type.String({ format: "date-time" }), "2024-01-01T00:00:00")).toEqual({
      type: "timezone_aware",
      loc: ["body", "value"],
      msg: "Input should have timezone info",
      input: "2024-01-01T00:00:00",
      ctx: {},
    });
  });

  it("reports a bad date", () => {
    expect(field(Type.String({ format: "date" }), "2024/01/01")).toMatchObject({
      type: "date_from_datetime_parsing",
      msg: "Input should be a valid date or datetime, invalid date separator, expected `-`",
    });
  });

  it("reports a bad email address as Pydantic's EmailStr does", () => {
    expect(field(Type.String({ format: "email" }), "nope")).toEqual({
      type: "value_error",
      loc: ["body", "value"],
      msg: "value is not a valid email address: An email address must have an @-sign.",
      input: "nope",
      ctx: { reason: "An email address must have an @-sign." },
    });
  });

  it("reports other formats as value errors", () => {
    expect(field(Type.String({ format: "uri" }), "not a uri")).toMatchObject({
      type: "value_error",
      msg: 'Value error, must match format "uri"',
      ctx: { error: 'must match format "uri"' },
    });
  });
});

describe("ajvErrorsToPydantic: enums, literals and unions", () => {
  it("lists one, two or more allowed values as Pydantic does", () => {
    expect(field(StringEnum(["a"]), "x")).toMatchObject({
      msg: "Input should be 'a'",
      ctx: { expected: "'a'" },
    });
    expect(field(StringEnum(["a", "b"]), "x")).toMatchObject({ msg: "Input should be 'a' or 'b'" });
    expect(field(StringEnum(["a", "b", "c"]), "x")).toMatchObject({
      type: "enum",
      msg: "Input should be 'a', 'b' or 'c'",
      ctx: { expected: "'a', 'b' or 'c'" },
    });
  });

  it("reports an enum miss, not a type error, for a value of another type", () => {
    expect(field(StringEnum(["a", "b"]), 5)).toMatchObject({ type: "enum", input: 5 });
  });

  it("folds a union of literals into one literal error", () => {
    const schema = Type.Union([Type.Literal("x"), Type.Literal("y")]);
    expect(field(schema, "z")).toEqual({
      type: "literal_error",
      loc: ["body", "value"],
      msg: "Input should be 'x' or 'y'",
      input: "z",
      ctx: { expected: "'x' or 'y'" },
    });
    expect(field(Type.Union([schema, Type.Null()]), 5)).toMatchObject({ type: "literal_error", input: 5 });
  });

  it("reports a nullable field by its non-null type", () => {
    expect(field(Type.Union([Type.String({ minLength: 2 }), Type.Null()]), 5)).toMatchObject({
      type: "string_type",
    });
    expect(field(Type.Union([Type.String({ minLength: 2 }), Type.Null()]), "a")).toMatchObject({
      type: "string_too_short",
    });
  });

  it("reports a union of objects through the branch the value came closest to", () => {
    const schema = Type.Union([
      Type.Object({ kind: Type.Literal("a"), a: Type.String() }),
      Type.Object({ kind: Type.Literal("b"), b: Type.Integer() }),
    ]);
    expect(validate(Type.Object({ value: schema }), { value: { kind: "b", b: "x" } })).toEqual([
      {
        type: "int_type",
        loc: ["body", "value", "b"],
        msg: "Input should be a valid integer",
        input: "x",
        ctx: {},
      },
    ]);
  });

  it("reports other unions through their first branch", () => {
    expect(field(Type.Union([Type.String(), Type.Integer()]), true)).toMatchObject({ type: "string_type" });
  });
});

describe("ajvErrorsToPydantic: headers and query parameters", () => {
  const headers = Type.Object({
    "idempotency-key": Type.String({ minLength: 1, maxLength: 255 }),
    "x-api-key": Type.String({ minLength: 1 }),
    "x-request-id": Type.String({ minLength: 1, title: "X-Request-ID" }),
  });

  it("names headers canonically, a title winning, and gives null for missing ones", () => {
    expect(validate(headers, { "x-api-key": "", "x-request-id": "" }, "header")).toEqual([
      { type: "missing", loc: ["header", "Idempotency-Key"], msg: "Field required", input: null, ctx: {} },
      {
        type: "string_too_short",
        loc: ["header", "X-Api-Key"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
      {
        type: "string_too_short",
        loc: ["header", "X-Request-ID"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
    ]);
  });

  it("gives null as the input of a missing query parameter", () => {
    const query = Type.Object({ limit: Type.Integer() });
    expect(validate(query, {}, "query")).toEqual([
      { type: "missing", loc: ["query", "limit"], msg: "Field required", input: null, ctx: {} },
    ]);
  });
});

describe("ajvErrorsToPydantic: anything else", () => {
  it("reports unknown keywords as value errors with Ajv's message", () => {
    expect(field(Type.Array(Type.Integer(), { uniqueItems: true }), [1, 1])).toEqual({
      type: "value_error",
      loc: ["body", "value"],
      msg: "Value error, must NOT have duplicate items (items ## 1 and 0 are identical)",
      input: [1, 1],
      ctx: { error: "must NOT have duplicate items (items ## 1 and 0 are identical)" },
    });
  });

  it("is deterministic and leaves the errors it was given alone", () => {
    const check = ajv.compile(Member);
    check({ role: 1, x: 1 });
    const errors = structuredClone(check.errors ?? []);
    const first = ajvErrorsToPydantic(errors, "body", { role: 1, x: 1 }, Member);
    expect(ajvErrorsToPydantic(errors, "body", { role: 1, x: 1 }, Member)).toEqual(first);
    expect(errors).toEqual(check.errors);
  });

  it("falls back to Ajv's order and title-cased headers without a schema", () => {
    const check = ajv.compile(Type.Object({ "content-md5": Type.String(), b: Type.String() }));
    check({});
    expect(ajvErrorsToPydantic(check.errors ?? [], "header", {}).map((item) => item.loc)).toEqual([
      ["header", "Content-Md5"],
      ["header", "B"],
    ]);
  });
});
