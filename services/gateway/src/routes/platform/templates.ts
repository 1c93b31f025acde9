import type { JsonObject } from "@bufbuild/protobuf";
import { COMPONENT_KINDS } from "@evalp/components";
import type { Definition, Template } from "@evalp/proto/platform/v1/template";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { callOptions } from "../../http/call.js";
import { iso } from "../../http/timestamps.js";
import { RequestValidationError } from "../../validation/json-body.js";
import { StringEnum } from "../../validation/request-validator.js";
import type { RouteDeps } from "../deps.js";
import { AppParams, COMMON_ERRORS, DateTime, IdempotentHeaders, Uuid } from "../schemas.js";
import { APP, type AppPath, appRef } from "./app.js";

/** Business ids: lower-case words joined by `.`, `_` or `-` (clones prefix them with `prefix.`). */
const BusinessId = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: "^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$",
});
/** A BCP 47 language tag, e.g. `en`, `en-GB`, `zh-Hant-TW`. */
const Locale = Type.String({ minLength: 2, maxLength: 35, pattern: "^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$" });
/** Creation checks only the kind; the full shape of each kind is checked when a bundle is validated. */
const Content = Type.Object(
  { kind: StringEnum(COMPONENT_KINDS) },
  { additionalProperties: true, description: "A component content: ScorecardContent, ExperienceContent, …" },
);

const DefinitionInput = Type.Object(
  {
    business_id: BusinessId,
    locale: Locale,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    content: Content,
  },
  { additionalProperties: false },
);

const DefinitionBody = Type.Object(
  {
    id: Uuid,
    app_id: Uuid,
    business_id: Type.String(),
    content: Type.Record(Type.String(), Type.Unknown()),
    content_hash: Type.String(),
    locale: Type.String(),
    name: Type.String(),
    revision: Type.Integer(),
    created_at: DateTime,
    created_by_user_id: Type.Optional(Uuid),
    published_at: Type.Optional(DateTime),
  },
  { title: "TemplateDefinition" },
);

const TemplateBody = Type.Object(
  {
    id: Uuid,
    app_id: Uuid,
    name: Type.String(),
    created_at: DateTime,
    definitions: Type.Array(DefinitionBody),
  },
  { title: "Template" },
);

/** A definition as the interface shows it: optional fields absent rather than null. */
export function definitionJson(definition: Definition) {
  return {
    id: definition.id,
    app_id: definition.appId,
    business_id: definition.businessId,
    content: definition.content ?? {},
    content_hash: definition.contentHash,
    locale: definition.locale,
    name: definition.name,
    revision: definition.revision,
    created_at: iso(definition.createdAt),
    ...(definition.createdByUserId ? { created_by_user_id: definition.createdByUserId } : {}),
    ...(definition.publishedAt ? { published_at: iso(definition.publishedAt) } : {}),
  };
}

function templateJson(template: Template | undefined) {
  if (!template) throw new Error("upstream returned no template");
  return {
    id: template.id,
    app_id: template.appId,
    name: template.name,
    created_at: iso(template.createdAt),
    definitions: template.definitions.map(definitionJson),
  };
}

type DefinitionFields = { business_id: string; locale: string; name: string; content: JsonObject };

function definitionInput(body: DefinitionFields) {
  return { businessId: body.business_id, locale: body.locale, name: body.name, content: body.content };
}

/** Two definitions of one request may not share (business_id, locale): which would be revision 1? */
function refuseRepeats(definitions: DefinitionFields[]): void {
  const seen = new Set<string>();
  const items = [];
  for (const [index, definition] of definitions.entries()) {
    const key = `${definition.business_id}\n${definition.locale}`;
    if (seen.has(key)) {
      const error = `(business_id, locale) ("${definition.business_id}", "${definition.locale}") repeats an earlier definition`;
      items.push({
        type: "value_error",
        loc: ["body", "definitions", String(index), "business_id"],
        msg: `Value error, ${error}`,
        input: definition.business_id,
        ctx: { error },
      });
    }
    seen.add(key);
  }
  if (items.length > 0) throw new RequestValidationError(items);
}

const TemplateParams = Type.Composite([AppParams, Type.Object({ template_id: Type.String() })]);
const tags = ["platform"];

/** `POST APP/templates`, `GET APP/templates/{id}`, `POST …/definitions`, #11 `POST …/clone`. */
export function templateRoutes(app: FastifyInstance, deps: RouteDeps): void {
  const templates = deps.upstreams.platform.templates;

  app.post(
    `${APP}/templates`,
    {
      config: { access: { auth: "operator", scope: "templates:write", idempotency: "required" } },
      schema: {
        tags,
        summary: "Create a template with its first definitions",
        params: AppParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 200 }),
            definitions: Type.Array(DefinitionInput, { minItems: 1, maxItems: 50 }),
          },
          { additionalProperties: false },
        ),
        response: { 201: TemplateBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const body = request.body as { name: string; definitions: DefinitionFields[] };
      refuseRepeats(body.definitions);
      const answer = await templates.createTemplate(
        {
          app: appRef(request.params as AppPath),
          name: body.name,
          definitions: body.definitions.map(definitionInput),
          createdByUserId: request.access?.principal.userId ?? undefined,
        },
        callOptions(request),
      );
      return reply.code(201).send(templateJson(answer.template));
    },
  );

  app.get(
    `${APP}/templates/:template_id`,
    {
      config: { access: { auth: "operator", scope: ["bundles:read", "templates:write"] } },
      schema: {
        tags,
        summary: "Get a template with every revision of its definitions",
        params: TemplateParams,
        response: { 200: TemplateBody, ...COMMON_ERRORS },
      },
    },
    async (request) => {
      const params = request.params as AppPath & { template_id: string };
      const answer = await templates.getTemplate(
        { app: appRef(params), templateId: params.template_id },
        callOptions(request),
      );
      return templateJson(answer.template);
    },
  );

  app.post(
    `${APP}/templates/:template_id/definitions`,
    {
      config: { access: { auth: "operator", scope: "templates:write", idempotency: "required" } },
      schema: {
        tags,
        summary: "Add the next revision of a definition",
        params: TemplateParams,
        headers: IdempotentHeaders,
        body: DefinitionInput,
        response: { 201: DefinitionBody, ...COMMON_ERRORS },
      },
    },
    async (request, reply) => {
      const params = request.params as AppPath & { template_id: string };
      const answer = await templates.addDefinition(
        {
          app: appRef(params),
          templateId: params.template_id,
          definition: definitionInput(request.body as DefinitionFields),
          createdByUserId: request.access?.principal.userId ?? undefined,
        },
        callOptions(request),
      );
      if (!answer.definition) throw new Error("upstream returned no definition");
      return reply.code(201).send(definitionJson(answer.definition));
    },
  );

  app.post(
    `${APP}/templates/:template_id/clone`,
    {
      config: { access: { auth: "operator", scope: "templates:write", idempotency: "required" } },
      schema: {
        tags,
        summary: "Clone the latest revision of every definition into a new template",
        params: TemplateParams,
        headers: IdempotentHeaders,
        body: Type.Object(
          { business_id_prefix: Type.String({ pattern: "^[a-z0-9](?:[a-z0-9_-]{0,126}[a-z0-9])?$" }) },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object(
            { template_id: Uuid, definitions: Type.Array(DefinitionBody) },
            { title: "TemplateClone" },
          ),
          ...COMMON_ERRORS,
        },
      },
    },
    async (request, reply) => {
      const params = request.params as AppPath & { template_id: string };
      const { business_id_prefix } = request.body as { business_id_prefix: string };
      const answer = await templates.cloneTemplate(
        {
          app: appRef(params),
          templateId: params.template_id,
          businessIdPrefix: business_id_prefix,
          createdByUserId: request.access?.principal.userId ?? undefined,
        },
        callOptions(request),
      );
      return reply
        .code(201)
        .send({ template_id: answer.templateId, definitions: answer.definitions.map(definitionJson) });
    },
  );
}
