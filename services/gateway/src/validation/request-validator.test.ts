import { type Static, Type } from "@sinclair/typebox";
import { describe, expect, it } from "vitest";
import { compileRequestValidator, type RequestParts, StringEnum } from "./request-validator.js";

const Role = StringEnum(["owner", "admin", "member", "viewer"]);

const schemas = {
  params: Type.Object({ environment_id: Type.String({ format: "uuid" }) }),
  querystring: Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
  }),
  headers: Type.Object({ "Idempotency-Key": Type.String({ minLength: 1, maxLength: 255 }) }),
  body: Type.Object(
    {
      email: Type.String({ minLength: 3, maxLength: 320 }),
      role: Type.Optional(Role),
      invited_at: Type.Optional(Type.String({ format: "date-time" })),
      items: Type.Optional(
        Type.Array(Type.Object({ external_id: Type.String({ minLength: 1, maxLength: 255 }) }), {
          minItems: 1,
          maxItems: 100,
        }),
      ),
    },
    { additionalProperties: false },
  ),
};

const ENVIRONMENT = "0190f3c4-1b2a-7c3d-8e4f-5a6b7c8d9e0f";

function request(overrides: Partial<RequestParts> = {}): RequestParts {
  return {
    params: { environment_id: ENVIRONMENT },
    query: {},
    headers: { "idempotency-key": "k1", "content-type": "application/json" },
    body: { email: "ada@example.com" },
    ...overrides,
  };
}

describe("compileRequestValidator", () => {
  const validate = compileRequestValidator(schemas);

  it("accepts a valid request with an empty list", () => {
    expect(validate(request())).toEqual([]);
  });

  it("reports every problem of every part together, in the order path, query, header, body", () => {
    const items = validate(
      request({
        body: {
          role: "guest",
          items: [{ external_id: "a" }, { external_id: "" }],
          invited_at: "2024",
          extra: true,
        },
        headers: { "content-type": "application/json" },
        query: { limit: "abc", cursor: "" },
        params: { environment_id: "xyz" },
      }),
    );
    expect(items).toEqual([
      {
        type: "uuid_parsing",
        loc: ["path", "environment_id"],
        msg: "Input should be a valid UUID, invalid character: found `x` at 1",
        input: "xyz",
        ctx: { error: "invalid character: found `x` at 1" },
      },
      {
        type: "int_parsing",
        loc: ["query", "limit"],
        msg: "Input should be a valid integer, unable to parse string as an integer",
        input: "abc",
        ctx: {},
      },
      {
        type: "string_too_short",
        loc: ["query", "cursor"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
      { type: "missing", loc: ["header", "Idempotency-Key"], msg: "Field required", input: null, ctx: {} },
      {
        type: "missing",
        loc: ["body", "email"],
        msg: "Field required",
        input: {
          role: "guest",
          items: [{ external_id: "a" }, { external_id: "" }],
          invited_at: "2024",
          extra: true,
        },
        ctx: {},
      },
      {
        type: "enum",
        loc: ["body", "role"],
        msg: "Input should be 'owner', 'admin', 'member' or 'viewer'",
        input: "guest",
        ctx: { expected: "'owner', 'admin', 'member' or 'viewer'" },
      },
      {
        type: "datetime_from_date_parsing",
        loc: ["body", "invited_at"],
        msg: "Input should be a valid datetime or date, input is too short",
        input: "2024",
        ctx: { error: "input is too short" },
      },
      {
        type: "string_too_short",
        loc: ["body", "items", "1", "external_id"],
        msg: "String should have at least 1 character",
        input: "",
        ctx: { min_length: 1 },
      },
      {
        type: "extra_forbidden",
        loc: ["body", "extra"],
        msg: "Extra inputs are not permitted",
        input: true,
        ctx: {},
      },
    ]);
  });

  it("coerces query values in place for the handler", () => {
    const query: Record<string, unknown> = { limit: "5", cursor: "abc" };
    expect(validate(request({ query }))).toEqual([]);
    expect(query).toEqual({ limit: 5, cursor: "abc" });
  });

  it("fills in defaults of absent query parameters", () => {
    const query: Record<string, unknown> = {};
    expect(validate(request({ query }))).toEqual([]);
    expect(query).toEqual({ limit: 50 });
  });

  it("reports query values as received, not as coerced", () => {
    expect(validate(request({ query: { limit: "0" } }))).toEqual([
      {
        type: "greater_than_equal",
        loc: ["query", "limit"],
        msg: "Input should be greater than or equal to 1",
        input: "0",
        ctx: { ge: 1 },
      },
    ]);
    expect(validate(request({ query: { limit: "101" } }))[0]).toMatchObject({
      type: "less_than_equal",
      input: "101",
    });
  });

  it("takes the body exactly as sent: no coercion, nothing stripped", () => {
    const numbers = compileRequestValidator({ body: Type.Object({ limit: Type.Integer() }) });
    expect(numbers(request({ body: { limit: "5" } }))).toEqual([
      {
        type: "int_type",
        loc: ["body", "limit"],
        msg: "Input should be a valid integer",
        input: "5",
        ctx: {},
      },
    ]);
    const body = { email: "ada@example.com", extra: 1 };
    expect(validate(request({ body }))).toHaveLength(1);
    expect(body).toEqual({ email: "ada@example.com", extra: 1 });
  });

  it("refuses U+0000 in body strings and keys and in query values, with the other problems", () => {
    const nul = (path: string[], input: string) => ({
      type: "value_error",
      loc: path,
      msg: "Value error, text must not contain the NUL character (U+0000)",
      input,
      ctx: { error: "text must not contain the NUL character (U+0000)" },
    });
    const free = compileRequestValidator({
      querystring: Type.Object({ action: Type.Optional(Type.String()) }),
      body: Type.Object({ name: Type.String(), profile: Type.Object({}), count: Type.Integer() }),
    });
    const body = { name: "a\u0000b", profile: { "k\u0000": ["x", "\u0000"] }, count: "1" };
    expect(free(request({ query: { action: "\u0000" }, body }))).toEqual([
      nul(["query", "action"], "\u0000"),
      expect.objectContaining({ loc: ["body", "count"], type: "int_type" }),
      nul(["body", "name"], "a\u0000b"),
      nul(["body", "profile", "k\u0000"], "k\u0000"),
      nul(["body", "profile", "k\u0000", "1"], "\u0000"),
    ]);
    expect(validate(request({ body: { email: "a\u0000@example.com" } }))).toHaveLength(1);
  });

  it("reports an absent body once, at loc ['body']", () => {
    const missing = [{ type: "missing", loc: ["body"], msg: "Field required", input: null, ctx: {} }];
    expect(validate(request({ body: undefined }))).toEqual(missing);
    expect(validate(request({ body: null }))).toEqual(missing);
  });

  it("checks headers against the lower-case names Fastify delivers", () => {
    const key = "k".repeat(256);
    expect(validate(request({ headers: { "idempotency-key": key } }))).toEqual([
      {
        type: "string_too_long",
        loc: ["header", "Idempotency-Key"],
        msg: "String should have at most 255 characters",
        input: key,
        ctx: { max_length: 255 },
      },
    ]);
  });

  it("title-cases header names declared in lower case, unless a title says otherwise", () => {
    const headers = compileRequestValidator({
      headers: Type.Object({
        "x-api-key": Type.String(),
        "X-API-Version": Type.Integer(),
        "x-trace": Type.String({ title: "X-Trace-ID" }),
      }),
    });
    expect(
      headers(request({ headers: { "x-api-version": "v2" } })).map((item) => [item.loc, item.type]),
    ).toEqual([
      [["header", "X-Api-Key"], "missing"],
      [["header", "X-API-Version"], "int_parsing"],
      [["header", "X-Trace-ID"], "missing"],
    ]);
  });

  it("wraps a lone value of a list parameter in a list", () => {
    const tags = compileRequestValidator({ querystring: Type.Object({ tag: Type.Array(Type.String()) }) });
    const query: Record<string, unknown> = { tag: "a" };
    expect(tags(request({ query }))).toEqual([]);
    expect(query).toEqual({ tag: ["a"] });
  });

  it("skips parts without a schema", () => {
    expect(compileRequestValidator({})(request({ body: "anything", query: { x: "y" } }))).toEqual([]);
  });

  it("can be compiled again from the same schemas", () => {
    expect(compileRequestValidator(schemas)(request({ query: { limit: "0" } }))).toHaveLength(1);
  });
});

describe("StringEnum", () => {
  it("is a plain string enum schema with the literal union as its static type", () => {
    const role: Static<typeof Role> = "owner";
    expect(role).toBe("owner");
    expect(StringEnum(["a", "b"], { description: "letters" })).toMatchObject({
      type: "string",
      enum: ["a", "b"],
      description: "letters",
    });
  });
});
