import { describe, expect, it } from "vitest";
import {
  jsonInvalid,
  locateJsonError,
  MAX_BODY_DEPTH,
  parseJsonBody,
  RequestValidationError,
} from "./json-body.js";

function failure(body: string) {
  try {
    parseJsonBody(body);
  } catch (error) {
    if (error instanceof RequestValidationError) return error;
    throw error;
  }
  throw new Error(`parsed ${JSON.stringify(body)}`);
}

/** [offset, message] as Python 3.11's json.loads reports them (e.pos, e.msg). */
function where(body: string): [string | undefined, unknown] {
  const item = failure(body).items[0];
  return [item?.loc[1], item?.ctx.error];
}

describe("parseJsonBody", () => {
  it("parses JSON", () => {
    expect(parseJsonBody('{"a": [1, 2.5, "x", null, true]}')).toEqual({ a: [1, 2.5, "x", null, true] });
    expect(parseJsonBody(' "text" ')).toBe("text");
  });

  it("refuses nesting past MAX_BODY_DEPTH as json_invalid at the bracket that goes too deep", () => {
    const nested = (depth: number) => `${"[".repeat(depth)}"\u00e9]"${"]".repeat(depth)}`;
    expect(parseJsonBody(`{"a": ${nested(MAX_BODY_DEPTH - 1)}}`)).toBeTypeOf("object");
    expect(where(`{"é": ${nested(MAX_BODY_DEPTH)}}`)).toEqual([
      String(6 + MAX_BODY_DEPTH - 1),
      "recursion limit exceeded",
    ]);
    expect(where(nested(100_000))).toEqual([String(MAX_BODY_DEPTH), "recursion limit exceeded"]);
    // The shortest body that goes too deep: the check skips only bodies too short to.
    const shortest = `${"[".repeat(MAX_BODY_DEPTH + 1)}${"]".repeat(MAX_BODY_DEPTH + 1)}`;
    expect(where(shortest)).toEqual([String(MAX_BODY_DEPTH), "recursion limit exceeded"]);
  });

  it("turns lone surrogates into U+FFFD, in values and keys, at every depth a body may have", () => {
    expect(parseJsonBody('"lone \\udfff"')).toBe("lone \ufffd");
    expect(parseJsonBody('{"\\ud800k": ["a\\ud83d", "\\ud83d\\ude00"]}')).toEqual({
      "\ufffdk": ["a\ufffd", "\ud83d\ude00"],
    });
    const deep = parseJsonBody(`${"[".repeat(MAX_BODY_DEPTH)}"\\udc00"${"]".repeat(MAX_BODY_DEPTH)}`);
    let bottom = deep;
    while (Array.isArray(bottom)) bottom = bottom[0];
    expect(bottom).toBe("\ufffd");
    expect(Object.getPrototypeOf(parseJsonBody('{"__proto__": {"x": "\\ud800"}}'))).toBe(Object.prototype);
  });

  it("renders a broken body as FastAPI's json_invalid item", () => {
    const error = failure('{"a":}');
    expect(error.statusCode).toBe(422);
    expect(error.items).toEqual([
      {
        type: "json_invalid",
        loc: ["body", "5"],
        msg: "JSON decode error",
        input: {},
        ctx: { error: "Expecting value" },
      },
    ]);
  });

  it.each([
    ['{"a":}', "5", "Expecting value"],
    ['{"a":1,}', "7", "Expecting property name enclosed in double quotes"],
    ["[1 2]", "3", "Expecting ',' delimiter"],
    ['{"a":1} x', "8", "Extra data"],
    ['{"a":"abc', "5", "Unterminated string starting at"],
    ["", "0", "Expecting value"],
    ["   \n", "0", "Expecting value"],
    ["[1,]", "3", "Expecting value"],
    ["[1,2", "4", "Expecting ',' delimiter"],
    ["{", "1", "Expecting property name enclosed in double quotes"],
    ["[", "1", "Expecting value"],
    ['{"a"', "4", "Expecting ':' delimiter"],
    ['{"a" 1}', "5", "Expecting ':' delimiter"],
    ["{1:2}", "1", "Expecting property name enclosed in double quotes"],
    ['{"a":1 "b":2}', "7", "Expecting ',' delimiter"],
    ['{"a":[1,{"b":}]}', "13", "Expecting value"],
    ['{"a":1}}', "7", "Extra data"],
    ["nul", "0", "Expecting value"],
    ["tru", "0", "Expecting value"],
    ["01", "1", "Extra data"],
    ["1.", "1", "Extra data"],
    ["[01]", "2", "Expecting ',' delimiter"],
    ["[1e]", "2", "Expecting ',' delimiter"],
    ["-", "0", "Expecting value"],
    ["[.5]", "1", "Expecting value"],
    ['"\\x"', "1", "Invalid \\escape"],
    ['"\\u12"', "2", "Invalid \\uXXXX escape"],
    ['"\\u12G4"', "2", "Invalid \\uXXXX escape"],
    ['"a\u0001b"', "2", "Invalid control character at"],
    ['"abc\\', "0", "Unterminated string starting at"],
  ])("%j fails at %s: %s", (body, offset, message) => {
    expect(where(body)).toEqual([offset, message]);
  });

  it("counts the offset in characters, as Python does, not in UTF-16 units", () => {
    expect(where('{"😀":1,}')).toEqual(["7", "Expecting property name enclosed in double quotes"]);
    expect(where('"😀" x')).toEqual(["4", "Extra data"]);
  });

  it("rejects Python's NaN and Infinity, which JSON has not", () => {
    expect(where("NaN")).toEqual(["0", "Expecting value"]);
    expect(where("[-Infinity]")).toEqual(["1", "Expecting value"]);
  });

  it("drops a leading byte order mark, as decoding the raw bytes does", () => {
    expect(parseJsonBody('\uFEFF{"a":1}')).toEqual({ a: 1 });
    expect(where('\uFEFF{"a":}')).toEqual(["5", "Expecting value"]);
  });

  it("survives deep nesting", () => {
    expect(where("[".repeat(100_000))).toEqual(["100000", "Expecting value"]);
  });
});

describe("locateJsonError", () => {
  it("finds nothing wrong with valid JSON", () => {
    expect(locateJsonError('{"a": [1, -2.5e3, "\\u00e9\\n", {}, [], null, true, false]}')).toBeNull();
  });
});

describe("RequestValidationError", () => {
  it("carries its items and status for the error handler", () => {
    const error = jsonInvalid(3, "Extra data");
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("RequestValidationError");
    expect(error.statusCode).toBe(422);
    expect(error.items).toEqual([
      {
        type: "json_invalid",
        loc: ["body", "3"],
        msg: "JSON decode error",
        input: {},
        ctx: { error: "Extra data" },
      },
    ]);
    expect(new RequestValidationError([]).message).toBe("Request validation failed (0 problems)");
  });
});
