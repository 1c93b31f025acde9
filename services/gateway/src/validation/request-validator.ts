import type { PydanticItem } from "@evalp/kit";
import { type SchemaOptions, type TUnsafe, Type } from "@sinclair/typebox";
import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import type { FastifyInstance, FastifySchema, FastifyServerOptions } from "fastify";
import { parseJsonBody, RequestValidationError } from "./json-body.js";
import { ajvErrorsToPydantic, type Location } from "./pydantic-errors.js";

// A request's body parsed and every part of it validated at once (docs/architecture.md, steps 5
// and 7): the JSON parser Fastify uses, the `preValidation` hook, and the compiled validators.

/** A JSON Schema object, typically built with TypeBox. */
export type JsonSchema = object;

/** The schemas a route declares, named as Fastify names them. */
export type RequestSchemas = {
  body?: JsonSchema;
  querystring?: JsonSchema;
  params?: JsonSchema;
  headers?: JsonSchema;
};

/** The parts of a request as Fastify hands them over (header names in lower case). */
export type RequestParts = {
  body: unknown;
  query: unknown;
  params: unknown;
  headers: Record<string, unknown>;
};

/** Validates every declared part of a request; the empty list means valid. */
export type RequestValidator = (parts: RequestParts) => PydanticItem[];

function createAjv(textParts: boolean): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    // TypeBox adds symbols and keywords Ajv does not know.
    strict: false,
    // Query, path and header values are text: `?limit=5` must reach the handler as 5, a lone `?tag=a` as
    // ["a"], and an absent parameter as its default. The JSON body is taken exactly as sent.
    coerceTypes: textParts ? "array" : false,
    useDefaults: textParts,
  });
  addFormats.default(ajv);
  return ajv;
}

/** A compiler with a cache: compiling is expensive, validating is not, and schemas live as long as routes. */
function cachedCompiler(ajv: Ajv): (schema: JsonSchema) => ValidateFunction {
  const cache = new WeakMap<JsonSchema, ValidateFunction>();
  return (schema) => {
    let validate = cache.get(schema);
    if (!validate) {
      validate = ajv.compile(schema);
      cache.set(schema, validate);
    }
    return validate;
  };
}

// One pair for the process, shared by every route.
const compileText = cachedCompiler(createAjv(true));
const compileBody = cachedCompiler(createAjv(false));
const lowerCased = new WeakMap<JsonSchema, JsonSchema>();

/**
 * The headers schema with lower-case property names, because that is how Fastify delivers headers.
 * A name declared in another spelling keeps it as its `title`, which is how `loc` names the header.
 */
function headersSchema(schema: JsonSchema): JsonSchema {
  const cached = lowerCased.get(schema);
  if (cached) return cached;
  const { properties, required } = schema as { properties?: Record<string, object>; required?: string[] };
  const lowered = {
    ...schema,
    ...(properties && {
      properties: Object.fromEntries(
        Object.entries(properties).map(([name, property]) => [
          name.toLowerCase(),
          name === name.toLowerCase() || "title" in property ? property : { ...property, title: name },
        ]),
      ),
    }),
    ...(required && { required: required.map((name) => name.toLowerCase()) }),
  };
  lowerCased.set(schema, lowered);
  return lowered;
}

type Part = { name: keyof RequestParts; location: Location; schema: JsonSchema; validate: ValidateFunction };

const MISSING_BODY: PydanticItem = {
  type: "missing",
  loc: ["body"],
  msg: "Field required",
  input: null,
  ctx: {},
};

/**
 * Compiles a route's schemas into one validator reporting every problem of a request at once, in
 * FastAPI's order (path, query, header, body). Query, path and header values are coerced in place
 * (the handler reads the coerced values) while their `input` is reported as received; extra body
 * properties are reported, never stripped.
 */
export function compileRequestValidator(schemas: RequestSchemas): RequestValidator {
  const parts: Part[] = [];
  const add = (name: Part["name"], location: Location, schema: JsonSchema | undefined) => {
    if (!schema) return;
    const validate = location === "body" ? compileBody(schema) : compileText(schema);
    parts.push({ name, location, schema, validate });
  };
  add("params", "path", schemas.params);
  add("query", "query", schemas.querystring);
  add("headers", "header", schemas.headers && headersSchema(schemas.headers));
  add("body", "body", schemas.body);

  return (request) => {
    const items: PydanticItem[] = [];
    for (const { name, location, schema, validate } of parts) {
      const value = request[name];
      if (name === "body" && (value === undefined || value === null)) {
        items.push(structuredClone(MISSING_BODY));
        continue;
      }
      // Coercion rewrites the value in place; keep what the client sent for `input`.
      const received = location === "body" ? value : copyOfText(value);
      const found = validate(value ?? {})
        ? []
        : ajvErrorsToPydantic(validate.errors ?? [], location, received, schema);
      const seen = new Set(found.map((item) => JSON.stringify(item.loc)));
      items.push(
        ...found,
        ...(location === "body" || location === "query" ? nulItems(received, location) : []).filter(
          (item) => !seen.has(JSON.stringify(item.loc)),
        ),
      );
    }
    return items;
  };
}

/**
 * A copy of a part made of text (path, query, headers: strings, or lists of them, as Fastify
 * parses them) that coercion cannot reach; one level deep, which such a part is, where a
 * structured clone was most of the cost of validating a small request. Anything deeper is
 * cloned whole.
 */
function copyOfText(value: unknown): unknown {
  if (value === null || typeof value !== "object") return value;
  const copy: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value)) {
    if (Array.isArray(inner) && inner.every((item) => item === null || typeof item !== "object")) {
      copy[name] = [...inner];
    } else if (inner !== null && typeof inner === "object") {
      return structuredClone(value);
    } else copy[name] = inner;
  }
  return copy;
}

const NUL_ERROR = "text must not contain the NUL character (U+0000)";

/**
 * A `value_error` for every string and key holding U+0000, in document order: no column can
 * store one (Postgres `text` and `jsonb` both refuse it), so it is refused here, where `loc` can
 * say where it was, rather than failing in a service.
 */
function nulItems(part: unknown, location: Location): PydanticItem[] {
  const items: PydanticItem[] = [];
  const problem = (path: string[], input: string): PydanticItem => ({
    type: "value_error",
    loc: [location, ...path],
    msg: `Value error, ${NUL_ERROR}`,
    input,
    ctx: { error: NUL_ERROR },
  });
  const pending: { value: unknown; path: string[] }[] = [{ value: part, path: [] }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { value, path } = next;
    if (typeof value === "string") {
      if (value.includes("\u0000")) items.push(problem(path, value));
    } else if (value !== null && typeof value === "object") {
      const children = Object.entries(value).map(([key, inner]) => {
        if (key.includes("\u0000")) items.push(problem([...path, key], key));
        return { value: inner, path: [...path, key] };
      });
      pending.push(...children.reverse());
    }
  }
  return items;
}

/**
 * A string enum as a single `{type: "string", enum}` schema: Ajv then reports one `enum` error, which
 * renders as Pydantic's `Input should be 'a', 'b' or 'c'`, where a TypeBox union of literals would
 * fail once per branch.
 */
export function StringEnum<const T extends readonly string[]>(
  values: T,
  options: SchemaOptions = {},
): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: "string", enum: [...values] });
}

/** The JSON body limit (docs/http.md). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/**
 * Fastify's own validation, off for every context (`schemaController` of the server's options):
 * `registerValidation` validates instead. Set on the server rather than with
 * `setValidatorCompiler`, because a plugin context whose schemas change rebuilds its compiler
 * from the server's factory, and Fastify's default one coerces the body (a `null` becomes 0).
 */
export const NO_FASTIFY_VALIDATION: FastifyServerOptions["schemaController"] = {
  compilersFactory: {
    // Fastify accepts any function as a route's validator; its types ask for an Ajv one.
    buildValidator: (() => () => () => true) as unknown as NonNullable<
      NonNullable<FastifyServerOptions["schemaController"]>["compilersFactory"]
    >["buildValidator"],
  },
};

/**
 * Validation declared once per route (its TypeBox schema, which also feeds /openapi.json) and
 * run here for every part at once, so that one 422 lists every problem of the request (Fastify's
 * own validation stops at the first failing part). Path ids are not validated here: a malformed
 * id is a 404, decided by the auth check and the services.
 */
export function registerValidation(app: FastifyInstance): void {
  // JSON only (docs/http.md): Fastify's own text/plain parser would hand a route a string body
  // (a 422, or nothing at all on a route without a body) where the contract says 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string", bodyLimit: BODY_LIMIT_BYTES },
    (_req, body, done) => {
      try {
        done(null, parseJsonBody(body as string));
      } catch (error) {
        done(error as Error, undefined);
      }
    },
  );

  // One validator per route's schema, compiled by its first request.
  const validators = new WeakMap<object, RequestValidator>();
  app.addHook("preValidation", async (request) => {
    const schema = request.routeOptions.schema as (FastifySchema & RequestSchemas) | undefined;
    if (!schema || (!schema.body && !schema.querystring && !schema.headers)) return;
    let validate = validators.get(schema);
    if (!validate) {
      validate = compileRequestValidator({
        body: schema.body,
        querystring: schema.querystring,
        headers: schema.headers,
      } as RequestSchemas);
      validators.set(schema, validate);
    }
    const items = validate({
      body: request.body,
      query: request.query,
      params: request.params,
      headers: request.headers as Record<string, unknown>,
    });
    if (items.length > 0) throw new RequestValidationError(items);
  });
}
