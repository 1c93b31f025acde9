import { type ReceivedRequest, type Receiver, startReceiver } from "@evalp/testing";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { expect } from "vitest";
import type { ApiClient } from "./client.js";

/** One webhook of the served document, compiled: its body's schema and its header parameters. */
type CompiledWebhook = {
  body: ValidateFunction;
  headers: { name: string; required: boolean; validate: ValidateFunction }[];
};

/** The event catalog as clients read it: the `webhooks` of GET /openapi.json, compiled. */
export type EventCatalog = {
  /** Every event type the document lists. */
  types: string[];
  /**
   * What is wrong with one delivery, measured against its type's webhook; empty when it matches.
   * Measured strictly: the document's schemas are open to fields added later (docs/versioning.md),
   * but the platform sends no field its document does not name.
   */
  problems(request: ReceivedRequest): string[];
  /** Whether a consumer validating with the document as served accepts this body. */
  accepts(body: unknown): boolean;
};

type Parameter = { name: string; in: string; required?: boolean; schema: object };
type Webhook = {
  post: { parameters?: Parameter[]; requestBody: { content: Record<string, { schema: object }> } };
};

const DOCUMENT_ID = "openapi.json";

/** A schema with every object that lists its properties closed to others (what the platform sends). */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const copy: Record<string, unknown> = Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [key, closed(value)]),
  );
  if ("properties" in copy && !("additionalProperties" in copy)) copy.additionalProperties = false;
  return copy;
}

function compiler(components: object): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: DOCUMENT_ID, components });
  return ajv;
}

/**
 * Compiles the document's `webhooks` with its components: OpenAPI 3.1 schemas are JSON Schema
 * 2020-12, and `#/components/schemas/X` references resolve within the document itself.
 */
export async function loadEventCatalog(api: ApiClient): Promise<EventCatalog> {
  const served = await api.get("/openapi.json");
  expect(served.status).toBe(200);
  const document = served.body as { components: object; webhooks?: Record<string, Webhook> };
  const ajv = compiler(closed(document.components) as object);
  const asServed = compiler(document.components);
  const consumers = new Map<string, ValidateFunction>();
  const compiled = new Map<string, CompiledWebhook>();
  for (const [type, webhook] of Object.entries(document.webhooks ?? {})) {
    // Each event's body is a named component (its schema a reference to it).
    const ref = (
      webhook.post.requestBody.content["application/json"]?.schema as { $ref?: string } | undefined
    )?.$ref;
    if (!ref) throw new Error(`webhook ${type} has no application/json body referring to a component`);
    consumers.set(type, asServed.compile({ $ref: `${DOCUMENT_ID}${ref}` }));
    compiled.set(type, {
      body: ajv.compile({ $ref: `${DOCUMENT_ID}${ref}` }),
      headers: (webhook.post.parameters ?? [])
        .filter((parameter) => parameter.in === "header")
        .map((parameter) => ({
          name: parameter.name.toLowerCase(),
          required: parameter.required === true,
          validate: ajv.compile(parameter.schema),
        })),
    });
  }
  return {
    types: [...compiled.keys()],
    accepts(body) {
      const type = (body as { type?: unknown } | null)?.type;
      const validate = typeof type === "string" ? consumers.get(type) : undefined;
      return validate !== undefined && validate(body) === true;
    },
    problems(request) {
      const problems: string[] = [];
      if (request.method !== "POST") problems.push(`method ${request.method}, not POST`);
      if (request.headers["content-type"] !== "application/json") {
        problems.push(`content-type ${request.headers["content-type"]}`);
      }
      let body: unknown;
      try {
        body = JSON.parse(request.body);
      } catch {
        return [...problems, "the body is not JSON"];
      }
      const type = (body as { type?: unknown } | null)?.type;
      const webhook = typeof type === "string" ? compiled.get(type) : undefined;
      if (!webhook) {
        return [...problems, `type ${JSON.stringify(type)} is not in the document's webhooks`];
      }
      if (!webhook.body(body)) {
        const errors = ajv.errorsText(webhook.body.errors, { separator: "\n", dataVar: "body" });
        problems.push(...errors.split("\n"));
      }
      for (const header of webhook.headers) {
        const value = request.headers[header.name];
        if (value === undefined) {
          if (header.required) problems.push(`header ${header.name} is missing`);
        } else if (!header.validate(value)) {
          problems.push(
            `header ${header.name}: ${ajv.errorsText(header.validate.errors, { dataVar: "value" })}`,
          );
        }
      }
      return problems;
    },
  };
}

/** Deliveries that did not match the document, not yet reported (see the API project's setup). */
const mismatches: string[] = [];

/**
 * Checks every request the receiver got and gets from now on against the document's webhooks,
 * and records each one that does not match; the API project's setup fails the test it happened in.
 */
export function checkEvents(receiver: Receiver, catalog: EventCatalog): void {
  const check = (request: ReceivedRequest) => {
    const problems = catalog.problems(request);
    if (problems.length > 0) mismatches.push(`${request.path} ${request.body}\n  ${problems.join("\n  ")}`);
  };
  for (const request of receiver.requests) check(request);
  receiver.onRequest(check);
}

/** A receiver for webhook tests whose every request is checked against the served document. */
export async function startCheckedReceiver(api: ApiClient): Promise<Receiver> {
  const catalog = await loadEventCatalog(api);
  const receiver = await startReceiver();
  checkEvents(receiver, catalog);
  return receiver;
}

/** The mismatches recorded since the last call, emptied. */
export function takeEventMismatches(): string[] {
  return mismatches.splice(0);
}
