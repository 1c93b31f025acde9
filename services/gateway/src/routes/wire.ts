import { isMessage, type JsonObject } from "@bufbuild/protobuf";
import { type Timestamp, TimestampSchema } from "@bufbuild/protobuf/wkt";
import {
  type SchemaOptions,
  type Static,
  type TArray,
  type TBoolean,
  type TInteger,
  type TNumber,
  type TObject,
  type TOptional,
  type TSchema,
  type TString,
  Type,
} from "@sinclair/typebox";
import { iso } from "../http/timestamps.js";
import { REFERS_TO } from "./schemas.js";

// What every plane's wire module builds its resources from: how a named schema is declared, and
// the mapper of a resource that only renames its RPC message's fields.

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

/** The schema a `ref` (schemas.ts) refers to, when it was made by `ref`. */
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
