import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import type { ApiClient } from "../../api/support/client.js";

/** A JSON Schema as /openapi.json states it (the subset the gateway's TypeBox schemas use). */
export type Schema = {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
};

export type Parameter = { name: string; in: "path" | "query" | "header"; required: boolean; schema: Schema };

/** Which credential an operation takes, by where its path lives (docs/authentication.md, docs/interview.md#the-agent-protocol). */
export type Door = "public" | "operator" | "participant" | "agent";

/** One operation of the public API as the OpenAPI document describes it. */
export type Operation = {
  method: string;
  /** The path template, `{name}` for each path parameter. */
  path: string;
  pathParams: string[];
  query: Parameter[];
  headers: Parameter[];
  body: { required: boolean; schema: Schema } | null;
  door: Door;
};

/** Every operation of GET /openapi.json, in document order. */
export async function loadOperations(api: ApiClient): Promise<Operation[]> {
  const document = await api.get("/openapi.json");
  expect(document.status).toBe(200);
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries(document.body.paths as Record<string, Record<string, any>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const parameters = (operation.parameters ?? []) as Parameter[];
      const body = operation.requestBody?.content?.["application/json"]?.schema as Schema | undefined;
      operations.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] as string),
        query: parameters.filter((p) => p.in === "query"),
        headers: parameters.filter((p) => p.in === "header"),
        body: body ? { required: Boolean(operation.requestBody.required), schema: body } : null,
        door: doorOf(path, operation.security),
      });
    }
  }
  return operations;
}

/**
 * The door of an operation: public under `/auth/` and for invitations (log-out included: fuzzing
 * it with the operator's credential would end that credential), and wherever the document says it
 * takes no credential (`security: []`).
 */
function doorOf(path: string, security: unknown): Door {
  if (path.startsWith("/v1/participant/")) return "participant";
  if (path.startsWith("/v1/agent/")) return "agent";
  if (path.startsWith("/auth/") || path.startsWith("/v1/invitations/")) return "public";
  if (Array.isArray(security) && security.length === 0) return "public";
  return "operator";
}

/**
 * The resource a path parameter or body field names: `organization_id` → `organization`,
 * `webhooks/{id}` → `webhook`, `scorecard_version_id` → `definition:scorecard`; undefined when
 * it names no resource.
 */
export function resourceOf(name: string, path = ""): string | undefined {
  if (name === "id") {
    const segment = /\/([a-z-]+)\/\{id\}/.exec(path)?.[1];
    return segment === "webhooks" ? "webhook" : segment;
  }
  if (name === "endpoint_id") return "webhook";
  const version = /^(.+)_version_id$/.exec(name);
  if (version) return `definition:${version[1]}`;
  return /^(.+)_id$/.exec(name)?.[1];
}

/** A path template with its parameters filled in (values are inserted as they are). */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`no value for path parameter ${name}`);
    return value;
  });
}

/** Strings that satisfy each pattern the API uses, the first that also fits the length bounds. */
const PATTERN_EXAMPLES = ["example", "en", "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0"];

/** Field names whose value must mean something beyond its schema for a request to go through. */
const FIELD_EXAMPLES: Record<string, () => unknown> = {
  url: () => "http://127.0.0.1:9/hook",
  email: () => `someone-${randomUUID().slice(0, 8)}@example.com`,
  starts_at: () => "2026-01-01T00:00:00.000Z",
  ends_at: () => "2026-01-02T00:00:00.000Z",
};

/**
 * A minimal value that satisfies `schema` (required fields, plus optional fields that name a
 * resource, so that a request also carries references): resource ids from `ids` by field name.
 */
export function exampleOf(schema: Schema, ids: Record<string, string>, field = ""): unknown {
  const named = FIELD_EXAMPLES[field];
  if (named) return named();
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.default ?? schema.enum[0];
  if (schema.anyOf) {
    const branch = schema.anyOf.find((s) => s.type !== "null") ?? schema.anyOf[0];
    return branch ? exampleOf(branch, ids, field) : null;
  }
  if (schema.default !== undefined) return schema.default;
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case "string":
      return exampleString(schema, ids, field);
    case "integer":
    case "number":
      return schema.minimum ?? Math.min(1, schema.maximum ?? 1);
    case "boolean":
      return true;
    case "array": {
      const item = schema.items ?? {};
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(item, ids, field));
    }
    case "object":
      return exampleObject(schema, ids);
    default:
      return {};
  }
}

function exampleObject(schema: Schema, ids: Record<string, string>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const reference = property.format === "uuid" && resourceOf(name) !== undefined;
    if (required.has(name) || reference) result[name] = exampleOf(property, ids, name);
  }
  return result;
}

function exampleString(schema: Schema, ids: Record<string, string>, field: string): string {
  if (schema.format === "uuid") {
    const resource = resourceOf(field);
    return (resource && ids[resource]) ?? randomUUID();
  }
  if (schema.format === "date-time") return new Date(Date.now() - 86_400_000).toISOString();
  if (schema.format === "email") return `someone-${randomUUID().slice(0, 8)}@example.com`;
  const min = schema.minLength ?? 0;
  const max = schema.maxLength ?? Number.POSITIVE_INFINITY;
  const fits = (value: string) => value.length >= min && value.length <= max;
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern);
    const found = PATTERN_EXAMPLES.find((value) => pattern.test(value) && fits(value));
    if (!found) throw new Error(`no example for pattern ${schema.pattern}`);
    return found;
  }
  return "example-value".padEnd(min, "x").slice(0, Math.max(min, Math.min(max, 13)));
}
