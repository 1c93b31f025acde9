import { Ajv, type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import { describe, expect, it } from "vitest";
import { EVENT_CATALOG, type EventType } from "./catalog.js";

/**
 * The schema with every object closed (no property it does not name): the schemas are open for
 * clients, but a sample must show exactly the fields the platform sends.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (typeof schema !== "object" || schema === null) return schema;
  // Without its `$id`: each compile stands alone.
  const copy: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema)
      .filter(([key]) => key !== "$id")
      .map(([key, value]) => [key, closed(value)]),
  );
  if (copy.type === "object" && copy.properties && copy.additionalProperties === undefined) {
    copy.additionalProperties = false;
  }
  return copy;
}

const ajv = new Ajv({ allErrors: true, strict: false });
addFormats.default(ajv);
const validators = new Map<EventType, ValidateFunction>();

/** The closed schema of an event type, compiled once (each schema has its `$id`). */
function validator(type: EventType): ValidateFunction {
  let validate = validators.get(type);
  if (!validate) {
    validate = ajv.compile(closed(JSON.parse(JSON.stringify(EVENT_CATALOG[type].schema))) as object);
    validators.set(type, validate);
  }
  return validate;
}

describe("the event catalog's samples", () => {
  it.each(Object.keys(EVENT_CATALOG) as EventType[])(
    "%s: its sample is a valid body of its schema",
    (type) => {
      const entry = EVENT_CATALOG[type];
      const validate = ajv.compile(closed(JSON.parse(JSON.stringify(entry.schema))) as object);
      expect(validate(entry.sample) ? [] : validate.errors).toEqual([]);
      expect(entry.sample.type).toBe(type);
    },
  );

  it("gives each sample event an id of its own", () => {
    const ids = Object.values(EVENT_CATALOG).map((entry) => entry.sample.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("refuses a sample that breaks its schema (the check can fail)", () => {
    const entry = EVENT_CATALOG["subject.imported"];
    const validate = validator("subject.imported");
    expect(validate({ ...entry.sample, data: { ...entry.sample.data, items: "two" } })).toBe(false);
    expect(validate({ ...entry.sample, data: { ...entry.sample.data, extra: 1 } })).toBe(false);
  });
});
