import type { JsonObject } from "@bufbuild/protobuf";
import { Type } from "@sinclair/typebox";
import { RequestValidationError } from "../../validation/json-body.js";
import type { RouteDeps } from "../deps.js";
import { byPath, reads, route, writes } from "../index.js";
import { Name, ref } from "../wire.js";
import { ContentInput } from "./contents.js";
import type { PlatformApi } from "./index.js";
import {
  type APP_PREFIX,
  appRef,
  authoredBy,
  definitionJson,
  Template,
  TemplateClone,
  TemplateDefinition,
  templateJson,
  templateRef,
} from "./wire.js";

/** Business ids: lower-case words joined by `.`, `_` or `-` (clones prefix them with `prefix.`). */
const BusinessId = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: "^[a-z0-9](?:[a-z0-9._-]*[a-z0-9])?$",
});
/** A BCP 47 language tag, e.g. `en`, `en-GB`, `zh-Hant-TW`. */
const Locale = Type.String({ minLength: 2, maxLength: 35, pattern: "^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$" });

const DefinitionInput = Type.Object(
  {
    business_id: BusinessId,
    locale: Locale,
    name: Name,
    content: ContentInput,
  },
  { additionalProperties: false },
);

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

/** `APP/templates`: create, get, add a definition's next revision, #11 clone. */
export function templateRoutes(app: PlatformApi<typeof APP_PREFIX>, deps: RouteDeps): void {
  const templates = deps.upstreams.platform.templates;

  route(app, "createTemplate", "POST /templates", writes("templates:write"), {
    body: Type.Object(
      {
        name: Name,
        definitions: Type.Array(DefinitionInput, { minItems: 1, maxItems: 50 }),
      },
      { additionalProperties: false },
    ),
    answer: ref(Template),
    handler: async ({ request, call }) => {
      const { body } = request;
      refuseRepeats(body.definitions);
      const answer = await templates.createTemplate(
        {
          app: appRef(request.params),
          name: body.name,
          definitions: body.definitions.map(definitionInput),
          ...authoredBy(request),
        },
        call,
      );
      return templateJson(answer.template);
    },
  });

  route(app, "getTemplate", "GET /templates/:template_id", reads(["bundles:read", "templates:write"]), {
    answer: ref(Template),
    ...byPath(templates.getTemplate, templateRef, (answer) => templateJson(answer.template)),
  });

  route(app, "addTemplateDefinition", "POST /templates/:template_id/definitions", writes("templates:write"), {
    body: DefinitionInput,
    answer: ref(TemplateDefinition),
    handler: async ({ request, call }) => {
      const answer = await templates.addDefinition(
        {
          ...templateRef(request.params),
          definition: definitionInput(request.body),
          ...authoredBy(request),
        },
        call,
      );
      return definitionJson(answer.definition);
    },
  });

  route(app, "cloneTemplate", "POST /templates/:template_id/clone", writes("templates:write"), {
    body: Type.Object(
      { business_id_prefix: Type.String({ pattern: "^[a-z0-9](?:[a-z0-9_-]{0,126}[a-z0-9])?$" }) },
      { additionalProperties: false },
    ),
    answer: ref(TemplateClone),
    handler: async ({ request, call }) => {
      const answer = await templates.cloneTemplate(
        {
          ...templateRef(request.params),
          businessIdPrefix: request.body.business_id_prefix,
          ...authoredBy(request),
        },
        call,
      );
      return { template_id: answer.templateId, definitions: answer.definitions.map(definitionJson) };
    },
  });
}
