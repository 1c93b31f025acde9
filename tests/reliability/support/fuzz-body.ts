import fc from "fast-check";
import type { Draft, Expected, Mutation } from "./fuzz-mutations.js";
import type { Operation, Schema } from "./fuzz-openapi.js";
import { headerText, JSON_SAMPLES, KIB, nastyString, nested } from "./fuzz-values.js";

const invalid: Expected = { status: 422 };

function schemaType(schema: Schema): string | undefined {
  return schema.anyOf || Array.isArray(schema.type) ? undefined : schema.type;
}

function hasType(value: unknown, type: string | undefined): boolean {
  switch (type) {
    case undefined:
      return true;
    case "integer":
      return Number.isInteger(value);
    case "number":
      return typeof value === "number";
    case "array":
      return Array.isArray(value);
    case "object":
      return value !== null && typeof value === "object" && !Array.isArray(value);
    default:
      return typeof value === type;
  }
}

/** Values just outside a schema's bounds (length, range, item count, enum, pattern, format). */
function outOfBounds(schema: Schema): unknown[] {
  const values: unknown[] = [];
  if (schema.minLength !== undefined && schema.minLength > 0) values.push("x".repeat(schema.minLength - 1));
  if (schema.maxLength !== undefined) values.push("x".repeat(schema.maxLength + 1));
  if (schema.minimum !== undefined) values.push(schema.minimum - 1);
  if (schema.maximum !== undefined) values.push(schema.maximum + 1);
  if (schema.minItems !== undefined && schema.minItems > 0) values.push([]);
  if (schema.enum) values.push("not-one-of-them");
  if (schema.pattern) values.push("Not A Match!");
  if (schema.format === "uuid") values.push("not-a-uuid");
  if (schema.format === "date-time") values.push("2026-13-45T25:61:00Z", "yesterday");
  return values;
}

/**
 * Values a slot must refuse: those of another JSON type (when the schema names one) and those
 * just outside its bounds; `typed` when the refusal is certain.
 */
function wrongValues({ path, schema }: Slot): { path: string[]; value: unknown; typed: boolean }[] {
  const type = schemaType(schema);
  const wrongTypes = type === undefined ? [] : JSON_SAMPLES.filter((value) => !hasType(value, type));
  return [...wrongTypes, ...outOfBounds(schema)].map((value) => ({ path, value, typed: true }));
}

/** Every place in a body schema a mutation can aim at: the root, each property, each first item. */
type Slot = { path: string[]; schema: Schema };

function slotsOf(schema: Schema, path: string[] = [], depth = 0): Slot[] {
  const slots: Slot[] = [{ path, schema }];
  if (depth >= 5) return slots;
  const branch = schema.anyOf?.find((s) => s.type !== "null") ?? schema;
  for (const [name, property] of Object.entries(branch.properties ?? {})) {
    slots.push(...slotsOf(property, [...path, name], depth + 1));
  }
  if (branch.items) slots.push(...slotsOf(branch.items, [...path, "0"], depth + 1));
  return slots;
}

/** Defines (never assigns: `__proto__` must stay a key) `value` at `path` in the JSON body. */
function setAt(draft: Draft, path: string[], value: unknown): void {
  const define = (node: object, key: string, inner: unknown) =>
    Object.defineProperty(node, key, { value: inner, writable: true, enumerable: true, configurable: true });
  if (draft.body.kind !== "json" || path.length === 0) {
    draft.body = { kind: "json", value };
    return;
  }
  let node = draft.body.value as Record<string, unknown>;
  if (node === null || typeof node !== "object") {
    node = {};
    draft.body = { kind: "json", value: node };
  }
  for (const key of path.slice(0, -1)) {
    if (node[key] === null || typeof node[key] !== "object") define(node, key, {});
    node = node[key] as Record<string, unknown>;
  }
  define(node, path.at(-1) as string, value);
}

function deleteAt(draft: Draft, path: string[], name: string): void {
  if (draft.body.kind !== "json") return;
  let node = draft.body.value as Record<string, unknown> | undefined;
  for (const key of path) node = node?.[key] as Record<string, unknown> | undefined;
  if (node && typeof node === "object") delete node[name];
}

/** Invalid JSON texts, some of them derived from the request's own valid body. */
function invalidJson(valid: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      "",
      "   ",
      "{",
      "[",
      '{"a":1,}',
      "{'a': 1}",
      "NaN",
      '{"a": Infinity}',
      '{"a":"\\x00"}',
      '{"a":"\\ud800"',
      '{"a":"tab\there"}',
      "\u0000",
      "[".repeat(100_000),
      `${'{"a":'.repeat(5000)}1`,
      '{"a":1}{"b":2}',
      "nul",
    ),
    fc.integer({ min: 0, max: Math.max(0, valid.length - 1) }).map((end) => valid.slice(0, end)),
    headerText(50)
      .filter((tail) => tail.trim() === tail)
      .map((tail) => `${valid}${tail}`),
  );
}

/** A request's body: not JSON, not declared as JSON, too big, too deep, or not what the schema says. */
export function bodyMutations(operation: Operation, valid: unknown): fc.Arbitrary<Mutation> {
  const validText = JSON.stringify(valid ?? {});
  const mutations: fc.Arbitrary<Mutation>[] = [
    invalidJson(validText).map((text) => ({
      note: `invalid JSON ${JSON.stringify(text.slice(0, 40))}`,
      apply: (draft: Draft) => {
        draft.body = { kind: "raw", text };
        draft.headers["content-type"] = "application/json";
      },
      expected: { status: 422, type: "json_invalid" },
    })),
    fc
      .constantFrom(
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "application/xml",
        "application/jsonx",
        "application/json-patch+json",
        "application/octet-stream",
        "*/*",
      )
      .map((type) => ({
        note: `Content-Type ${type}`,
        apply: (draft: Draft) => {
          if (draft.body.kind === "none") draft.body = { kind: "raw", text: validText };
          draft.headers["content-type"] = type;
        },
        expected: { status: 415, code: "unsupported_media_type" },
      })),
    fc.constant({
      note: "body over 1 MiB",
      apply: (draft: Draft) => {
        draft.body = { kind: "json", value: { padding: "p".repeat(KIB * KIB) } };
      },
      expected: { status: 413, code: "payload_too_large" },
    }),
  ];
  const schema = operation.body?.schema;
  if (!schema) {
    mutations.push(
      fc.constantFrom<unknown>({}, { unexpected: true }, [], "text", nested(500, "array")).map((value) => ({
        note: `a body where none is expected: ${JSON.stringify(value).slice(0, 40)}`,
        apply: (draft: Draft) => {
          draft.body = { kind: "json", value };
        },
      })),
    );
    return fc.oneof(...mutations);
  }
  const slots = slotsOf(schema);
  const slot = fc.constantFrom(...slots);
  const missing = slots.flatMap(({ path, schema: s }) => (s.required ?? []).map((name) => ({ path, name })));
  const closedObjects = slots.filter(({ schema: s }) => s.properties && s.additionalProperties === false);
  const where = (path: string[]) => path.join(".") || "(root)";
  mutations.push(
    fc.constant<Mutation>({
      note: "no body",
      apply: (draft) => {
        draft.body = { kind: "none" };
        delete draft.headers["content-type"];
      },
      ...(operation.body?.required && { expected: { status: 422, type: "missing", loc: ["body"] } }),
    }),
    fc.constantFrom(...slots.flatMap(wrongValues)).map(({ path, value, typed }) => ({
      note: `wrong value at ${where(path)}: ${JSON.stringify(value).slice(0, 40)}`,
      apply: (draft: Draft) => setAt(draft, path, structuredClone(value)),
      ...(typed && { expected: invalid }),
    })),
    fc.tuple(slot, nastyString).map(([{ path }, value]) => ({
      note: `string at ${where(path)}: ${JSON.stringify(value.slice(0, 40))} (${value.length})`,
      apply: (draft: Draft) => setAt(draft, path, value),
    })),
    fc
      .tuple(
        slot,
        fc.constantFrom<[number, "array" | "object"]>([500, "array"], [500, "object"], [100_000, "array"]),
      )
      .map(([{ path }, [depth, shape]]) => ({
        note: `${depth} levels of ${shape}s at ${where(path)}`,
        apply: (draft: Draft) => setAt(draft, path, nested(depth, shape)),
        expected: { status: 422, type: "json_invalid" },
      })),
  );
  if (missing.length > 0) {
    mutations.push(
      fc.constantFrom(...missing).map(({ path, name }) => ({
        note: `missing ${[...path, name].join(".")}`,
        apply: (draft: Draft) => deleteAt(draft, path, name),
        expected: { status: 422, type: "missing" },
      })),
    );
  }
  if (closedObjects.length > 0) {
    const name = fc.oneof(
      fc.constantFrom("__proto__", "constructor", "id", "organization_id", "is_admin", ""),
      fc.string({ maxLength: 20 }),
    );
    mutations.push(
      fc
        .tuple(fc.constantFrom(...closedObjects), name)
        .filter(([{ schema: s }, key]) => !Object.hasOwn(s.properties ?? {}, key))
        .map(([{ path }, key]) => ({
          note: `extra field ${JSON.stringify(key)} at ${where(path)}`,
          apply: (draft: Draft) => setAt(draft, [...path, key], "extra"),
          expected: { status: 422, type: "extra_forbidden" },
        })),
    );
  }
  return fc.oneof(...mutations);
}
