import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { requestContext, withTransaction, writeAuditRecord } from "@evalp/kit";
import {
  type AddDefinitionRequest,
  type AddDefinitionResponse,
  AddDefinitionResponseSchema,
} from "@evalp/proto/platform/v1/template";
import type { RequireApp } from "../app-check.js";
import { contentKind, insertDefinition, lockTemplate } from "../db/definitions.js";
import { definitionMessage } from "../db/rows.js";
import { findTemplate } from "../db/templates.js";
import type { Deps } from "../deps.js";

/** The next revision of a definition: the last revision of (template, business_id, locale) + 1. */
export function addDefinition(deps: Deps, requireApp: RequireApp) {
  return async (req: AddDefinitionRequest, ctx: HandlerContext): Promise<AddDefinitionResponse> => {
    const app = await requireApp(req.app, ctx);
    const input = req.definition;
    if (!input) throw new Error("definition missing");
    const kind = contentKind(input.content);
    const row = await withTransaction(deps.pool, async (tx) => {
      const template = await findTemplate(tx, app.appId, req.templateId);
      await lockTemplate(tx, template.id);
      const definition = await insertDefinition(tx, {
        templateId: template.id,
        appId: app.appId,
        input,
        kind,
        createdByUserId: req.createdByUserId,
      });
      await writeAuditRecord(tx, requestContext(ctx.values), {
        organizationId: app.organizationId,
        appId: app.appId,
        action: "definition.created",
        resourceType: "definition",
        resourceId: definition.id,
        metadata: {
          template_id: template.id,
          business_id: definition.business_id,
          revision: definition.revision,
        },
      });
      return definition;
    });
    return create(AddDefinitionResponseSchema, { definition: definitionMessage(row) });
  };
}
