import { isMessage, type JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import { ERROR_CATALOG } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import {
  type SchemaOptions,
  type Static,
  type TArray,
  type TBoolean,
  type TInteger,
  type TNumber,
  type TObject,
  type TOptional,
  type TProperties,
  type TSchema,
  type TString,
  Type,
} from "@sinclair/typebox";
import type { RouteAccess } from "../admission/credentials.js";
import { iso } from "../http/timestamps.js";

// What every plane's wire module builds on: how a schema is declared (named, nullable, referred
// to), the parts of a cursor list, the mapper of a resource that only renames its RPC message's
// fields, and the headers and error responses every route's document shows.

/** The options of a named schema: a component of the document, called `name`. */
export const named = (name: string, description: string) => ({ $id: name, title: name, description });

/** `schema`, or null. */
export const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A string of one of `values` in the document; typed as any string, as upstream answers it. */
export const OneOf = (values: readonly string[], options: SchemaOptions = {}) =>
  Type.Unsafe<string>({ ...options, type: "string", enum: [...values] });

/** A JSON object whose fields are the client's (profiles, metadata, answers), as the RPCs take it. */
export const FreeObject = Type.Unsafe<JsonObject>(Type.Record(Type.String(), Type.Unknown()));

/** Wire messages always carry their required parts; a missing one is an upstream bug. */
export function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`upstream returned no ${what}`);
  return value;
}

/** A resource's display name, as it is created or renamed (organization, app, program, bundle…). */
export const Name = Type.String({ minLength: 1, maxLength: 200 });

export const Uuid = Type.String({ format: "uuid" });
export const DateTime = Type.String({ format: "date-time" });

// Where an environment's resources are, as the contract's ENV prefix and the RPCs name them.

/** Where an environment's resources live (the ENV prefix of the contract). */
export const ENV_PREFIX = "/v1/organizations/:organization_id/apps/:app_id/environments/:environment_id";

/** The path parameters of an ENV route. */
export type EnvPath = { organization_id: string; app_id: string; environment_id: string };

/** The wire form of an ENV path, which services check link by link (404 when any does not hold). */
export function environmentRef(params: EnvPath) {
  return {
    organizationId: params.organization_id,
    appId: params.app_id,
    environmentId: params.environment_id,
  };
}

/** What a list of an environment's resources asks its RPC: the environment of the path, and the page. */
export function environmentPage(params: EnvPath, page: PageRequest) {
  return { environment: environmentRef(params), page };
}

/**
 * Where a `ref` keeps the schema it refers to, for `wireOf` (below): a symbol, so the
 * document and the validators, which read string keys, never see it.
 */
export const REFERS_TO = Symbol("refers to");

/**
 * A reference to a named schema (one with an `$id`, registered with the app): the document shows
 * it once, under components, and refers to it.
 */
export function ref<T extends TSchema>(schema: T) {
  if (!schema.$id) throw new Error("a referenced schema needs an $id");
  const reference = Type.Unsafe<Static<T>>(Type.Ref(schema.$id));
  Object.assign(reference, { [REFERS_TO]: schema });
  return reference;
}

// Cursor lists (docs/paging.md).

/** `limit` and `cursor` of every cursor list (docs/paging.md). */
export const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 512 })),
});

/** A page envelope of `item` (referred to when it is a named schema). */
export function Page<T extends TSchema>(item: T, name: string) {
  return Type.Object(
    {
      items: Type.Array(item.$id ? ref(item) : Type.Unsafe<Static<T>>(item)),
      next_cursor: Type.Union([Type.String(), Type.Null()]),
    },
    { title: name },
  );
}

/**
 * The query of a cursor list with filters of its own (docs/paging.md): the page's `limit` and
 * `cursor` and the filters after them, each an optional query parameter. A list without filters
 * declares no query: `route()` gives it `PageQuery`.
 */
export function pageQuery<F extends TProperties>(filters: F) {
  return Type.Object({ ...PageQuery.properties, ...filters });
}

/** A cursor list's answer: a page of `item`, named after it (`App`: `AppPage`). */
export function pageOfItems<T extends TObject>(item: T) {
  return Page(item, `${item.$id}Page`);
}

// The mapper from RPC messages.

/** `snake_case` as a message field's name: `created_at` is `createdAt`. */
type Camel<Name extends string> = Name extends `${infer Head}_${infer Tail}`
  ? `${Head}${Capitalize<Camel<Tail>>}`
  : Name;

/**
 * What a message's field may hold for a property of schema `S`: a string is a string or, for a
 * `date-time`, a Timestamp (which the types cannot tell apart); a count a number or a 64-bit
 * bigint; an array an array of what its items are read from. Other schemas read anything.
 */
type FieldOf<S> =
  S extends TOptional<infer Inner>
    ? FieldOf<Inner> | undefined
    : S extends TString
      ? string | Timestamp
      : S extends TInteger | TNumber
        ? number | bigint
        : S extends TBoolean
          ? boolean
          : S extends TArray<infer Item>
            ? ReadonlyArray<FieldOf<Item>>
            : unknown;

/** The field names a resource `S` is read from: its properties' names in camelCase. */
type FieldNames<S extends TObject> = Camel<keyof S["properties"] & string>;

/**
 * A message a resource `S` can be read from: it has a field of each property's name in camelCase
 * (a field it may leave unset is still declared by its type), each of a type the property can be
 * mapped from.
 */
export type MessageOf<S extends TObject> = {
  [Name in keyof S["properties"] & string as Camel<Name>]?: FieldOf<S["properties"][Name]>;
};

/** Nothing when message type `M` declares every field `S` reads; else the fields it lacks (the compiler shows them). */
type Declares<S extends TObject, M> = [Exclude<FieldNames<S>, keyof M>] extends [never]
  ? unknown
  : { missingFields: Exclude<FieldNames<S>, keyof M> };

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());

/** A JSON Schema node as the mapper walks it: an object whose keywords are not yet known. */
type Node = { readonly [keyword: string]: unknown };
const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const nodes = (value: unknown): Node[] => (Array.isArray(value) ? value.filter(isNode) : []);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : [];

/** The schema a `ref` (above) refers to, when it was made by `ref`. */
function referredBy(node: Node): Node | undefined {
  const target: unknown = Reflect.get(node, REFERS_TO);
  return isNode(target) ? target : undefined;
}

/** How one value is put on the wire; `absent` is what an unset field becomes (undefined: left out). */
type Mapper = { map: (value: unknown) => unknown; absent: unknown };

const allowsNull = (node: Node): boolean => node.type === "null" || nodes(node.anyOf).some(allowsNull);

/**
 * The mapper of `node`, worked out once when the resource's mapper is made (at start-up), so an
 * answer only runs the steps its schema needs. Refuses what it would not map faithfully: a
 * reference to a schema it cannot see.
 */
function compile(node: Node, at: string): Mapper {
  const absent = allowsNull(node)
    ? null
    : node.type === "object" && node.properties === undefined
      ? {}
      : undefined;
  if (typeof node.$ref === "string") {
    const target = referredBy(node);
    if (!target) throw new Error(`wireOf: ${at} refers to ${node.$ref}; map it by hand`);
    return compile(target, at);
  }
  const branch = nodes(node.anyOf).find((candidate) => candidate.type !== "null");
  if (branch) return { ...compile(branch, at), absent };
  if (node.format === "date-time") return { map: (value) => iso(timestamp(value, at)), absent };
  if (isNode(node.properties)) return { map: objectMapper(node, node.properties, at), absent };
  if (isNode(node.items)) {
    const item = compile(node.items, `${at}[]`);
    return {
      map: (value) => (Array.isArray(value) ? value.map((entry) => mapValue(item, entry)) : value),
      absent,
    };
  }
  return { map: (value) => (typeof value === "bigint" ? Number(value) : value), absent };
}

function timestamp(value: unknown, at: string): Timestamp {
  if (!isMessage(value, TimestampSchema)) throw new Error(`upstream returned no timestamp at ${at}`);
  return value;
}

function mapValue(mapper: Mapper, value: unknown): unknown {
  return value === undefined || value === null ? mapper.absent : mapper.map(value);
}

/** The mapper of an object schema: each property read from the message's field of its camelCase name. */
function objectMapper(node: Node, properties: Node, at: string): (value: unknown) => unknown {
  const requiredNames = new Set(strings(node.required));
  const fields = Object.entries(properties)
    .filter((entry): entry is [string, Node] => isNode(entry[1]))
    .map(([name, property]) => ({
      name,
      from: camel(name),
      mapper: compile(property, `${at}.${name}`),
      required: requiredNames.has(name),
    }));
  return (value) => {
    if (!isNode(value)) return value;
    const out: Record<string, unknown> = {};
    for (const field of fields) {
      const mapped = mapValue(field.mapper, value[field.from]);
      if (mapped !== undefined || field.required) out[field.name] = mapped;
    }
    return out;
  };
}

/**
 * The mapper of a resource whose wire form only renames its RPC message's fields: each property
 * of `schema` is the message's field of that name in camelCase (the compiler checks that the
 * message has each); a `date-time` is the timestamp in RFC 3339 (docs/http.md); an absent field
 * is null where the schema allows null, `{}` for a free object, and left out where it is
 * optional; 64-bit counts are numbers; nested objects, arrays of them and named schemas it
 * refers to (`ref`) are mapped alike. A resource that computes a field has a mapper of its own.
 */
export function wireOf<S extends TObject>(schema: S) {
  const name = schema.$id ?? schema.title ?? "resource";
  const resource = compile(schema, name);
  return <M extends MessageOf<S>>(message: (M & Declares<S, M>) | undefined): Static<S> => {
    const mapped = resource.map(required(message, name));
    // The mapper was compiled from `schema`, property by property, so what it builds is the
    // schema's; the types cannot follow a walk over the schema's keywords (wire.test.ts does).
    return mapped as Static<S>;
  };
}

// Headers and responses of every route (the document).

/** Idempotency-Key where it is required (docs/idempotency.md); lower case because Fastify lower-cases headers. */
export const IdempotentHeaders = Type.Object({
  "idempotency-key": Type.String({ minLength: 1, maxLength: 255, title: "Idempotency-Key" }),
});

/** Idempotency-Key where it is optional and honoured when sent. */
export const OptionalIdempotencyHeaders = Type.Object({
  "idempotency-key": Type.Optional(Type.String({ minLength: 1, maxLength: 255, title: "Idempotency-Key" })),
});

/** The application error body (docs/errors.md); `code` is one of the catalog's. */
export const ApplicationError = Type.Object(
  {
    detail: Type.Object({
      code: Type.Unsafe<string>({ type: "string", enum: Object.keys(ERROR_CATALOG) }),
      message: Type.String(),
      context: Type.Record(Type.String(), Type.Unknown()),
      request_id: Type.String(),
    }),
  },
  named("ApplicationError", "An error (docs/errors.md)."),
);

/** The validation error body (docs/errors.md): one item per problem of the request. */
export const ValidationError = Type.Object(
  {
    detail: Type.Array(
      Type.Object({
        loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
        msg: Type.String(),
        type: Type.String(),
        ctx: Type.Record(Type.String(), Type.Unknown()),
        input: Type.Unknown(),
      }),
    ),
  },
  named("ValidationError", "What is wrong with a request, item by item (docs/errors.md)."),
);

const text = (description: string) => ({ type: "string", description });

/** Headers every response carries. */
const EVERY_RESPONSE = {
  "X-Request-Id": text("The request's id (the one sent, or a new one): quote it when reporting a problem."),
  "RateLimit-Limit": text("Requests allowed in the current window."),
  "RateLimit-Remaining": text("Requests left in the current window."),
  "RateLimit-Reset": text("Seconds until the window resets."),
};

const RETRY_AFTER = { "Retry-After": text("Seconds to wait before trying again.") };

/** What each error status means, as the document describes it. */
const ERROR_MEANINGS: Record<number, string> = {
  401: "No valid credential (missing, unknown, revoked or expired).",
  403: "The credential may not do this (scope or role).",
  404: "The resource does not exist, or is not the caller's to see.",
  409: "Conflicts with the resource's current state, or (`idempotency_key_in_use`) a request with this Idempotency-Key is still being answered.",
  410: "The link or token has expired.",
  413: "The body is larger than 1 MiB.",
  415: "The body is not `application/json`.",
  422: "The request is invalid: each problem is an item of `detail` (or an application error).",
  429: "Too many requests: wait for `Retry-After` seconds.",
  503: "A part of the platform is unavailable: retry after `Retry-After` seconds (with the same Idempotency-Key).",
  504: "The platform did not answer in time; the change may or may not have been made (retry with the same Idempotency-Key).",
};

/**
 * The success response of a route: its body (none for 204), what it means, and its headers
 * (`idempotent`: a change that honours an Idempotency-Key, docs/idempotency.md).
 */
export function successResponse(description: string, body: TSchema | undefined, idempotent: boolean): object {
  const headers = !idempotent
    ? EVERY_RESPONSE
    : {
        ...EVERY_RESPONSE,
        "Idempotent-Replayed": text(
          "`true` when this is the stored answer to an earlier request with this Idempotency-Key.",
        ),
      };
  return body ? { ...body, description, headers } : { type: "null", description, headers };
}

/** A success response whose body is text of `mediaType` (a guide's markdown), not JSON. */
export function textResponse(description: string, mediaType: string): object {
  return { description, headers: EVERY_RESPONSE, content: { [mediaType]: { schema: { type: "string" } } } };
}

/**
 * The error responses of a route: the ones every route can give, those of its access (a
 * credential: 401, 403; an Idempotency-Key: 409 while its first request is being answered) and
 * of a body (413, 415), and `extra`. `meanings` replaces the common description of a status.
 */
export function errorResponses(
  access: RouteAccess,
  hasBody: boolean,
  extra: number[],
  honoursIdempotencyKey: boolean,
  meanings: Partial<Record<number, string>> = {},
): Record<number, object> {
  const statuses = new Set([404, 422, 429, 503, 504, ...extra]);
  if (honoursIdempotencyKey) statuses.add(409);
  if (hasBody) {
    statuses.add(413);
    statuses.add(415);
  }
  if (access.auth !== "none") {
    statuses.add(401);
    statuses.add(403);
  }
  const responses: Record<number, object> = {};
  for (const status of [...statuses].sort()) {
    const headers = status === 429 || status === 503 ? { ...EVERY_RESPONSE, ...RETRY_AFTER } : EVERY_RESPONSE;
    const body =
      status === 422 ? Type.Union([ref(ValidationError), ref(ApplicationError)]) : ref(ApplicationError);
    responses[status] = { ...body, description: meanings[status] ?? ERROR_MEANINGS[status], headers };
  }
  return responses;
}
