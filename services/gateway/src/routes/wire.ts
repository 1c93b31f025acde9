import type { JsonObject } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { type SchemaOptions, type Static, type TObject, type TSchema, Type } from "@sinclair/typebox";
import { iso } from "../http/timestamps.js";

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

type Json = { [key: string]: unknown };
type Schema = Json & {
  type?: string;
  format?: string;
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
};

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
const allowsNull = (schema: Schema) => schema.type === "null" || (schema.anyOf ?? []).some(allowsNull);
const isRecord = (schema: Schema) => schema.type === "object" && schema.properties === undefined;

/** Refuses, when the mapper is made (at start-up), a schema it would not map faithfully. */
function assertMappable(schema: Schema, at: string): void {
  if (typeof schema.$ref === "string")
    throw new Error(`wireOf: ${at} refers to ${schema.$ref}; map it by hand`);
  for (const branch of schema.anyOf ?? []) assertMappable(branch, at);
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    assertMappable(property, `${at}.${name}`);
  if (schema.items) assertMappable(schema.items, `${at}[]`);
}

function mapValue(schema: Schema, value: unknown): unknown {
  if (value === undefined || value === null) {
    if (allowsNull(schema)) return null;
    if (isRecord(schema)) return {};
    return undefined;
  }
  const branch = schema.anyOf?.find((candidate) => candidate.type !== "null");
  if (branch) return mapValue(branch, value);
  if (schema.format === "date-time") return iso(value as Timestamp | undefined);
  if (typeof value === "bigint") return Number(value);
  if (schema.properties && typeof value === "object" && value !== null)
    return mapObject(schema, value as Json);
  if (schema.items && Array.isArray(value))
    return value.map((item) => mapValue(schema.items as Schema, item));
  return value;
}

/** An object schema's properties with the message field each is read from, worked out once. */
type Field = { name: string; from: string; schema: Schema; required: boolean };
const fieldsOf = new WeakMap<Schema, Field[]>();

function fields(schema: Schema): Field[] {
  let found = fieldsOf.get(schema);
  if (!found) {
    const requiredNames = new Set(schema.required ?? []);
    found = Object.entries(schema.properties ?? {}).map(([name, property]) => ({
      name,
      from: camel(name),
      schema: property,
      required: requiredNames.has(name),
    }));
    fieldsOf.set(schema, found);
  }
  return found;
}

function mapObject(schema: Schema, message: Json): Json {
  const out: Json = {};
  for (const field of fields(schema)) {
    const value = mapValue(field.schema, message[field.from]);
    if (value !== undefined || field.required) out[field.name] = value;
  }
  return out;
}

/**
 * The mapper of a resource whose wire form only renames its RPC message's fields: each property
 * of `schema` is the message's field of that name in camelCase; a `date-time` is the timestamp in
 * RFC 3339 (docs/http.md); an absent field is null where the schema allows null, `{}` for a free
 * object, and left out where it is optional; 64-bit counts are numbers; nested objects and arrays
 * of them are mapped alike. A resource that computes a field has a mapper of its own.
 */
export function wireOf<T extends TObject>(schema: T) {
  const name = schema.$id ?? schema.title ?? "resource";
  assertMappable(schema as unknown as Schema, name);
  return (message: object | undefined): Static<T> =>
    // The shape is the schema's by construction; the response serializer holds the route to it.
    mapObject(schema as unknown as Schema, required(message, name) as Json) as Static<T>;
}
