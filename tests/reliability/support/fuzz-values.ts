import fc from "fast-check";

export const KIB = 1024;

/** Strings that have broken parsers, encoders and databases before. */
export const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "nul\u0000inside",
  "\ud800",
  "lone \udfff low",
  "\ud83d",
  "\u202eevil\u202c",
  "\u200f\u05e9\u05dc\u05d5\u05dd \u0645\u0631\u062d\u0628\u0627",
  "\ufeffbom",
  "e\u0301\u0301\u0301",
  "\ud83d\udc69\u200d\ud83d\udc69\u200d\ud83d\udc67",
  "\uffff\ufffe",
  "\\",
  "'\"`",
  "' OR 1=1 --",
  "../../etc/passwd",
  "%s%n%x",
  "$" + "{jndi:ldap://x}",
  "<script>alert(1)</script>",
  "\r\n\t\u000b\u000c",
  "null",
  "1e309",
  "-0",
  "__proto__",
];

/** Nasty strings, random code points (any plane) and a 100 KB string. */
export const nastyString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.constant("h".repeat(100 * KIB)) },
);

/** Values of every JSON type, to put where the schema wants another. */
export const JSON_SAMPLES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  1e308,
  "",
  "text",
  "42",
  [],
  [null],
  {},
  { a: 1 },
];

/**
 * Path ids that never reach the API's own handling: not valid percent-encoded UTF-8, or longer
 * than the router takes (100 characters). Left out of the fuzzed paths, and tested on their own.
 */
export const UNROUTABLE_PATH_IDS = ["%zz", "%ED%A0%80", "%C0%AF", "x".repeat(101)];

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The string with its lone surrogates replaced by U+FFFD, as a UTF-8 encoder does. */
export function wellFormed(value: string): string {
  return value.replace(LONE_SURROGATE, "\uFFFD");
}

/** Percent-encodes a string as UTF-8, lone surrogates included (as their WTF-8 bytes). */
export function encodeAny(value: string): string {
  let encoded = "";
  for (const char of value) {
    const code = char.codePointAt(0) ?? 0;
    if (code >= 0xd800 && code <= 0xdfff) {
      const bytes = [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)];
      encoded += bytes.map((byte) => `%${byte.toString(16).toUpperCase()}`).join("");
    } else encoded += encodeURIComponent(char);
  }
  return encoded;
}

/** Header values fetch can send: printable ASCII and Latin-1, never CR, LF or NUL. */
export const headerText = (maxLength: number) =>
  fc.string({
    unit: fc.oneof(
      fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
      fc.integer({ min: 0xa0, max: 0xff }).map((c) => String.fromCharCode(c)),
    ),
    minLength: 1,
    maxLength,
  });

const base62 = (length: number) =>
  fc.string({
    unit: fc.constantFrom(..."0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"),
    minLength: length,
    maxLength: length,
  });

/** Authorization, X-API-Key and cookie values that authenticate nobody. */
export const garbageCredential: fc.Arbitrary<Record<string, string>> = fc.oneof(
  fc.constantFrom<Record<string, string>>(
    { authorization: "Bearer" },
    { authorization: "Bearer " },
    { authorization: "Basic dXNlcjpwYXNzd29yZA==" },
    { authorization: "Bearer a.b.c" },
    // A JWT with `alg: none` and a participant `typ`: no signature, no entry.
    {
      authorization:
        "Bearer eyJhbGciOiJub25lIiwidHlwIjoiZXZhbHAtcGFydGljaXBhbnQrand0In0.eyJzdWIiOiJ4IiwiZXhwIjo5OTk5OTk5OTk5fQ.x",
    },
    { authorization: `Bearer ${"t".repeat(10 * KIB)}` },
    { "x-api-key": "" },
    { cookie: "evp_session=" },
    { cookie: "evp_session=%zz%00; evp_session=second" },
  ),
  headerText(300).map((text) => ({ authorization: `Bearer ${text}` })),
  headerText(300).map((text) => ({ authorization: text })),
  headerText(300).map((text) => ({ "x-api-key": text })),
  headerText(300).map((text) => ({ cookie: `evp_session=${text}` })),
  fc.tuple(base62(8), base62(32)).map(([prefix, rest]) => ({ "x-api-key": `evk_${prefix}_${rest}` })),
  base62(43).map((token) => ({ authorization: `Bearer evs_${token}` })),
);

/**
 * A value nested `depth` levels deep, as a marker that `expandNested` turns into JSON text: the
 * deepest of them would overflow JSON.stringify's stack.
 */
export function nested(depth: number, shape: "array" | "object"): string {
  return `@@nested:${depth}:${shape}@@`;
}

/** JSON text with every `nested` marker expanded. */
export function expandNested(json: string): string {
  return json.replace(/"@@nested:(\d+):(array|object)@@"/g, (_, depth: string, shape: string) => {
    const [open, close] = shape === "array" ? ["[", "]"] : ['{"deeper":', "}"];
    return `${open.repeat(Number(depth))}"bottom"${close.repeat(Number(depth))}`;
  });
}
