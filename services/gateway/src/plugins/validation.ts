import type { FastifyInstance, FastifySchema, FastifyServerOptions } from "fastify";
import { parseJsonBody, RequestValidationError } from "../validation/json-body.js";
import {
  compileRequestValidator,
  type RequestSchemas,
  type RequestValidator,
} from "../validation/request-validator.js";

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
 * id is a 404, decided by the auth plugin and the services.
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
