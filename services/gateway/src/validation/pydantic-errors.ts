import {
  lengthProblem,
  type PydanticItem,
  type PydanticProblem,
  pluralCount,
  pythonAlternatives,
} from "@evalp/kit";
import type { ErrorObject } from "ajv";
import { dateParseError, emailSyntaxError, isNaiveDateTime, uuidParseError } from "./format-reasons.js";
import { collapseUnions } from "./union-errors.js";

/** Where a value came from; the first element of every `loc`. */
export type Location = "body" | "query" | "path" | "header";

type Json = Record<string, unknown>;

/**
 * Renders Ajv's errors (Ajv 8, `allErrors: true`) for one request part as Pydantic items, so the
 * contract's 422 body does not depend on the validator we happen to use.
 *
 * `received` is the part as the client sent it (before Ajv coerced anything): every `input` is read
 * from it. `schema` is the schema the part was validated against; it gives the document order of the
 * items and header titles, and may be omitted (Ajv's order and title-cased header names are used).
 *
 * Invariants: at most one item per `loc` (Pydantic stops at a field's first failure), items in the
 * order of the schema's properties with unknown keys after them, and the output is a pure function of
 * the input, so equal requests give byte-identical bodies.
 */
export function ajvErrorsToPydantic(
  errors: readonly ErrorObject[],
  location: Location,
  received: unknown,
  schema?: unknown,
): PydanticItem[] {
  const byLoc = new Map<string, { error: ErrorObject; path: string[]; rank: number; order: number }>();
  collapseUnions(errors.filter((error) => error.keyword !== "if")).forEach((error, order) => {
    const path = errorPath(error);
    const key = JSON.stringify(path);
    const rank = RANK[error.keyword] ?? OTHER_RANK;
    const held = byLoc.get(key);
    if (!held || rank < held.rank) byLoc.set(key, { error, path, rank, order: held?.order ?? order });
  });
  return [...byLoc.values()]
    .map((entry) => ({ ...entry, key: documentKey(schema, entry.path) }))
    .sort((a, b) => compareKeys(a.key, b.key) || a.order - b.order)
    .map(({ error, path }) => ({
      loc: locOf(location, path, schema),
      ...problemOf(error, location, received, path),
    }));
}

/**
 * Which of several failures at one `loc` Pydantic would report: an enum or literal decides alone (its
 * validator has no separate type check), then the type, then length and bounds, then pattern, format.
 */
const RANK: Record<string, number> = {
  enum: 0,
  const: 0,
  type: 1,
  minLength: 2,
  maxLength: 2,
  minItems: 2,
  maxItems: 2,
  minProperties: 2,
  maxProperties: 2,
  minimum: 2,
  maximum: 2,
  exclusiveMinimum: 2,
  exclusiveMaximum: 2,
  multipleOf: 2,
  pattern: 3,
  format: 4,
};
const OTHER_RANK = 5;

/** The data path of the value an error is about: for a missing or extra key, the key itself. */
function errorPath(error: ErrorObject): string[] {
  const path = error.instancePath === "" ? [] : error.instancePath.slice(1).split("/").map(unescapePointer);
  const params = error.params as Json;
  if (typeof params.missingProperty === "string") path.push(params.missingProperty);
  else if (error.keyword === "additionalProperties") path.push(String(params.additionalProperty));
  return path;
}

function unescapePointer(segment: string): string {
  return segment.replaceAll("~1", "/").replaceAll("~0", "~");
}

function locOf(location: Location, path: string[], schema: unknown): string[] {
  const [first, ...rest] = path;
  if (location !== "header" || first === undefined) return [location, ...path];
  const title = propertySchema(schema, first)?.title;
  return [location, typeof title === "string" ? title : titleCaseHeader(first), ...rest];
}

/** `x-api-key` -> `X-Api-Key`: the canonical spelling of a header Fastify hands over in lower case. */
function titleCaseHeader(name: string): string {
  return name
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join("-");
}

function problemOf(
  error: ErrorObject,
  location: Location,
  received: unknown,
  path: string[],
): PydanticProblem {
  const params = error.params as Json;
  const input = valueAt(received, path);
  if (typeof params.missingProperty === "string") {
    // Pydantic shows the object that lacks the field; FastAPI has no object for query and headers.
    return problem(
      "missing",
      "Field required",
      {},
      location === "body" ? valueAt(received, path.slice(0, -1)) : null,
    );
  }
  const limit = params.limit as number;
  switch (error.keyword) {
    case "additionalProperties":
      return problem("extra_forbidden", "Extra inputs are not permitted", {}, input);
    case "type":
      return typeProblem(String(params.type), input, location !== "body");
    case "enum":
    case "const": {
      const values = (params.allowedValues ?? [params.allowedValue]) as unknown[];
      const expected = pythonAlternatives(values);
      const type = error.keyword === "enum" ? "enum" : "literal_error";
      return problem(type, `Input should be ${expected}`, { expected }, input);
    }
    case "minLength":
      return problem(
        "string_too_short",
        `String should have at least ${pluralCount(limit, "character")}`,
        { min_length: limit },
        input,
      );
    case "maxLength":
      return problem(
        "string_too_long",
        `String should have at most ${pluralCount(limit, "character")}`,
        { max_length: limit },
        input,
      );
    case "minItems":
    case "maxItems":
    case "minProperties":
    case "maxProperties":
      return lengthProblem(
        error.keyword.startsWith("min") ? "min" : "max",
        limit,
        typeof input === "object" && input ? (input as Json) : [],
      );
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum":
      return boundProblem(String(params.comparison), limit, input);
    case "multipleOf": {
      const factor = params.multipleOf;
      return problem(
        "multiple_of",
        `Input should be a multiple of ${factor}`,
        { multiple_of: factor },
        input,
      );
    }
    case "pattern":
      return problem(
        "string_pattern_mismatch",
        `String should match pattern '${params.pattern}'`,
        { pattern: params.pattern },
        input,
      );
    case "format":
      return formatProblem(String(params.format), input, error.message);
    default:
      return valueError(error.message ?? error.keyword, input);
  }
}

function problem(type: string, msg: string, ctx: Json, input: unknown): PydanticProblem {
  return { type, msg, ctx, input };
}

function valueError(message: string, input: unknown): PydanticProblem {
  return problem("value_error", `Value error, ${message}`, { error: message }, input);
}

/** [type, msg] for a JSON value of the wrong type, then for a string that does not parse as one. */
const TYPE_PROBLEMS: Record<string, [string, string, string?, string?]> = {
  integer: [
    "int_type",
    "Input should be a valid integer",
    "int_parsing",
    "Input should be a valid integer, unable to parse string as an integer",
  ],
  number: [
    "float_type",
    "Input should be a valid number",
    "float_parsing",
    "Input should be a valid number, unable to parse string as a number",
  ],
  boolean: [
    "bool_type",
    "Input should be a valid boolean",
    "bool_parsing",
    "Input should be a valid boolean, unable to interpret input",
  ],
  string: ["string_type", "Input should be a valid string"],
  array: ["list_type", "Input should be a valid list"],
  object: ["dict_type", "Input should be a valid dictionary"],
  null: ["none_required", "Input should be None"],
};

/** Query, path and header values arrive as strings, so for them a failed type is a failed parse. */
function typeProblem(types: string, input: unknown, fromText: boolean): PydanticProblem {
  const expected = types.split(",").find((type) => type !== "null") ?? "null";
  const known = TYPE_PROBLEMS[expected];
  if (!known) return valueError(`must be ${expected}`, input);
  const [type, msg, parseType, parseMsg] = known;
  if (fromText && typeof input === "string" && parseType && parseMsg) {
    return problem(parseType, parseMsg, {}, input);
  }
  return problem(type, msg, {}, input);
}

const BOUNDS: Record<string, [string, string, string]> = {
  ">=": ["greater_than_equal", "greater than or equal to", "ge"],
  ">": ["greater_than", "greater than", "gt"],
  "<=": ["less_than_equal", "less than or equal to", "le"],
  "<": ["less_than", "less than", "lt"],
};

function boundProblem(comparison: string, limit: number, input: unknown): PydanticProblem {
  const [type, words, key] = BOUNDS[comparison] ?? ["value_error", comparison, "limit"];
  return problem(type, `Input should be ${words} ${limit}`, { [key]: limit }, input);
}

function formatProblem(format: string, input: unknown, ajvMessage: string | undefined): PydanticProblem {
  const text = String(input);
  switch (format) {
    case "uuid": {
      const error = uuidParseError(text);
      return problem("uuid_parsing", `Input should be a valid UUID, ${error}`, { error }, input);
    }
    case "date-time":
    case "iso-date-time": {
      if (isNaiveDateTime(text)) {
        return problem("timezone_aware", "Input should have timezone info", {}, input);
      }
      const error = dateParseError(text) ?? "unexpected extra characters at the end of the input";
      return problem(
        "datetime_from_date_parsing",
        `Input should be a valid datetime or date, ${error}`,
        { error },
        input,
      );
    }
    case "date": {
      const error = dateParseError(text) ?? "unexpected extra characters at the end of the input";
      return problem(
        "date_from_datetime_parsing",
        `Input should be a valid date or datetime, ${error}`,
        { error },
        input,
      );
    }
    case "email": {
      const reason = emailSyntaxError(text);
      return problem("value_error", `value is not a valid email address: ${reason}`, { reason }, input);
    }
    default:
      return valueError(ajvMessage ?? `must match format "${format}"`, input);
  }
}

function valueAt(root: unknown, path: readonly string[]): unknown {
  let node = root;
  for (const segment of path) {
    if (typeof node !== "object" || node === null || !Object.hasOwn(node, segment)) return null;
    node = (node as Json)[segment];
  }
  return node === undefined ? null : node;
}

function isJson(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A nullable schema (`anyOf [T, null]`) stands for T when walking the document. */
function unwrapNullable(schema: unknown): unknown {
  if (!isJson(schema)) return schema;
  const branches = schema.anyOf ?? schema.oneOf;
  if (!Array.isArray(branches)) return schema;
  return branches.find((branch) => !(isJson(branch) && branch.type === "null"));
}

function propertySchema(schema: unknown, name: string): Json | undefined {
  const node = unwrapNullable(schema);
  if (!isJson(node) || !isJson(node.properties) || !Object.hasOwn(node.properties, name)) return undefined;
  const property = node.properties[name];
  return isJson(property) ? property : undefined;
}

/**
 * Position of a data path in document order: declared properties by declaration, undeclared keys after
 * them (ties keep Ajv's order, which follows the data), array items by index.
 */
function documentKey(schema: unknown, path: readonly string[]): number[] {
  const key: number[] = [];
  let node = schema;
  for (const segment of path) {
    node = unwrapNullable(node);
    const properties = isJson(node) && isJson(node.properties) ? Object.keys(node.properties) : undefined;
    if (properties) {
      const index = properties.indexOf(segment);
      key.push(index < 0 ? properties.length : index);
      node = index < 0 ? undefined : (node as { properties: Json }).properties[segment];
    } else {
      key.push(/^\d+$/.test(segment) ? Number(segment) : 0);
      node = isJson(node) ? node.items : undefined;
    }
  }
  return key;
}

/** Lexicographic; a parent sorts before its children. */
function compareKeys(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const difference = (a[i] ?? 0) - (b[i] ?? 0);
    if (difference !== 0) return difference;
  }
  return a.length - b.length;
}
