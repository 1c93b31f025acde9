import type { PydanticItem } from "@evalp/kit";

/**
 * Thrown for any request that fails validation, by the body parser and by route validation alike, so
 * that one branch of the gateway's error handler renders every 422 as `{"detail": items}`.
 */
export class RequestValidationError extends Error {
  readonly statusCode = 422;
  readonly items: PydanticItem[];

  constructor(items: PydanticItem[]) {
    super(`Request validation failed (${items.length} ${items.length === 1 ? "problem" : "problems"})`);
    this.name = "RequestValidationError";
    this.items = items;
  }
}

/**
 * FastAPI's answer to a body that is not JSON: one `json_invalid` item whose `loc` holds the offset
 * (in characters, as a string) and whose `ctx.error` holds Python's json message for it.
 */
export function jsonInvalid(offset: number, message: string): RequestValidationError {
  return new RequestValidationError([
    {
      type: "json_invalid",
      loc: ["body", String(offset)],
      msg: "JSON decode error",
      input: {},
      ctx: { error: message },
    },
  ]);
}

/**
 * The gateway's `application/json` parser: JSON.parse, with failures reported where and how Python's
 * json module reports them. Register it with `{ parseAs: "string" }` and throw its error through `done`.
 * A leading BOM is dropped, as Starlette's decoding of the raw bytes does. An empty or blank body is
 * "Expecting value" at 0 (the gateway's rule; Python would point past the whitespace).
 */
export function parseJsonBody(body: string): unknown {
  const text = body.startsWith("\uFEFF") ? body.slice(1) : body;
  if (/^[ \t\n\r]*$/.test(text)) throw jsonInvalid(0, "Expecting value");
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    const found = locateJsonError(text) ?? { index: 0, message: "Expecting value" };
    // Python counts code points, JavaScript UTF-16 units.
    throw jsonInvalid([...text.slice(0, found.index)].length, found.message);
  }
  // Nesting past MAX_BODY_DEPTH takes more brackets than a shorter body holds: most bodies.
  const deep = text.length > MAX_BODY_DEPTH ? tooDeepAt(text) : null;
  if (deep !== null) throw jsonInvalid([...text.slice(0, deep)].length, "recursion limit exceeded");
  return SURROGATE_ESCAPE.test(text) ? toWellFormed(parsed) : parsed;
}

/**
 * How deep objects and arrays may nest in a body: pydantic-core's JSON parser stops at the same
 * depth ("recursion limit exceeded"). Deeper bodies are refused here, as no service could take
 * them: their protobuf form nests two messages per level, and every recursive step after the
 * parser (canonical JSON, protobuf) would exhaust the stack on the deepest bodies 1 MiB holds.
 */
export const MAX_BODY_DEPTH = 200;

/** The index of the bracket that opens one level more than MAX_BODY_DEPTH, or null. */
function tooDeepAt(text: string): number | null {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (inString) {
      if (code === 0x5c) i++;
      else if (code === 0x22) inString = false;
    } else if (code === 0x22) inString = true;
    else if (code === 0x7b || code === 0x5b) {
      depth++;
      if (depth > MAX_BODY_DEPTH) return i;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return null;
}

/** A `\uD800`-`\uDFFF` escape: the only way a body's UTF-8 can carry a lone surrogate. */
const SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Replaces lone surrogates in every string and key of a parsed body with U+FFFD, as UTF-8
 * encoding does anyway on the way to a service or the database: everything after the parser
 * (the idempotency fingerprint's RFC 8785 canonical JSON above all, which refuses them) sees
 * well-formed text. Iterative, so nesting depth cannot overflow the stack; keys are redefined,
 * never assigned, so `__proto__` stays an ordinary key as JSON.parse made it.
 */
function toWellFormed(root: unknown): unknown {
  const fix = (value: string) => value.replace(LONE_SURROGATE, "\uFFFD");
  if (typeof root === "string") return fix(root);
  const pending: object[] = root !== null && typeof root === "object" ? [root] : [];
  for (let node = pending.pop(); node !== undefined; node = pending.pop()) {
    const record = node as Record<string, unknown>;
    const entries = Object.entries(record);
    const renamed = !Array.isArray(node) && entries.some(([key]) => fix(key) !== key);
    if (renamed) for (const [key] of entries) delete record[key];
    for (const [key, value] of entries) {
      const fixed = typeof value === "string" ? fix(value) : value;
      if (fixed !== null && typeof fixed === "object") pending.push(fixed);
      Object.defineProperty(record, renamed ? fix(key) : key, {
        value: fixed,
        writable: true,
        enumerable: true,
        configurable: true,
      });
    }
  }
  return root;
}

type JsonError = { index: number; message: string };

const WHITESPACE = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?/y;

function skipWhitespace(text: string, index: number): number {
  WHITESPACE.lastIndex = index;
  WHITESPACE.test(text);
  return WHITESPACE.lastIndex;
}

/**
 * Where and why Python's json.loads (CPython's C scanner, Python <= 3.12 messages) rejects `text`, or
 * null if it accepts it. Iterative, so nesting depth cannot overflow the stack. Python's NaN and
 * Infinity are rejected ("Expecting value"): JSON.parse and the services reject them too.
 */
export function locateJsonError(text: string): JsonError | null {
  const open: ("{" | "[")[] = [];
  let i = skipWhitespace(text, 0);
  for (;;) {
    // A value starts at i.
    let end: number | JsonError;
    const c = text[i];
    if (c === "{" || c === "[") {
      const inner = skipWhitespace(text, i + 1);
      if (text[inner] === (c === "{" ? "}" : "]")) end = inner + 1;
      else {
        open.push(c);
        const next = c === "{" ? objectKey(text, inner) : inner;
        if (typeof next !== "number") return next;
        i = next;
        continue;
      }
    } else end = scalarEnd(text, i);
    if (typeof end !== "number") return end;
    // After a value: close containers until one continues with another member.
    i = skipWhitespace(text, end);
    for (;;) {
      const container = open.at(-1);
      if (container === undefined) return i === text.length ? null : { index: i, message: "Extra data" };
      if (text[i] === (container === "{" ? "}" : "]")) {
        open.pop();
        i = skipWhitespace(text, i + 1);
        continue;
      }
      if (text[i] !== ",") return { index: i, message: "Expecting ',' delimiter" };
      i = skipWhitespace(text, i + 1);
      if (container === "{") {
        const next = objectKey(text, i);
        if (typeof next !== "number") return next;
        i = next;
      }
      break;
    }
  }
}

/** Reads `"key" :` at i; returns where the member's value starts. */
function objectKey(text: string, i: number): number | JsonError {
  if (text[i] !== '"') return { index: i, message: "Expecting property name enclosed in double quotes" };
  const end = stringEnd(text, i);
  if (typeof end !== "number") return end;
  const colon = skipWhitespace(text, end);
  if (text[colon] !== ":") return { index: colon, message: "Expecting ':' delimiter" };
  return skipWhitespace(text, colon + 1);
}

function scalarEnd(text: string, i: number): number | JsonError {
  if (text[i] === '"') return stringEnd(text, i);
  for (const literal of ["null", "true", "false"]) if (text.startsWith(literal, i)) return i + literal.length;
  NUMBER.lastIndex = i;
  return NUMBER.test(text) ? NUMBER.lastIndex : { index: i, message: "Expecting value" };
}

/** The index after the string opened at i. */
function stringEnd(text: string, i: number): number | JsonError {
  for (let j = i + 1; j < text.length; j++) {
    const code = text.charCodeAt(j);
    if (code === 0x22) return j + 1;
    if (code < 0x20) return { index: j, message: "Invalid control character at" };
    if (code !== 0x5c) continue;
    const escaped = text[j + 1];
    if (escaped === undefined) break;
    if (escaped === "u") {
      // Python wants the four digits and one more character (the closing quote at least) to follow.
      if (j + 6 >= text.length || !/^[0-9a-fA-F]{4}$/.test(text.slice(j + 2, j + 6))) {
        return { index: j + 1, message: "Invalid \\uXXXX escape" };
      }
      j += 5;
    } else if ('"\\/bfnrt'.includes(escaped)) j++;
    else return { index: j, message: "Invalid \\escape" };
  }
  return { index: i, message: "Unterminated string starting at" };
}
