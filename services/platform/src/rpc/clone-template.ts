import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, requestContext, withTransaction, writeAuditRecord } from "@evalp/kit";
import {
  type CloneTemplateRequest,
  type CloneTemplateResponse,
  CloneTemplateResponseSchema,
} from "@evalp/proto/platform/v1/template";
import type { RequireApp } from "../app-check.js";
import { copyDefinition, latestDefinitions } from "../db/definitions.js";
import { type DefinitionRow, definitionMessage } from "../db/rows.js";
import { findTemplate, insertTemplate } from "../db/templates.js";
import type { Deps } from "../deps.js";

/**
 * #11: a new template holding the latest revision of every (business_id, locale) of the source,
 * with new ids, `business_id` = prefix + "." + the old one, revision 1, the same content and
 * hash, and no `published_at` (docs/endpoints.md).
 */
export function cloneTemplate(deps: Deps, requireApp: RequireApp) {
  return async (req: CloneTemplateRequest, ctx: HandlerContext): Promise<CloneTemplateResponse> => {
    const app = await requireApp(req.app, ctx);
    const { templateId, definitions } = await withTransaction(deps.pool, async (tx) => {
      const source = await findTemplate(tx, app.appId, req.templateId);
      const createdByUserId = req.createdByUserId ?? null;
      const clone = await insertTemplate(tx, {
        id: newId(),
        appId: app.appId,
        name: source.name,
        createdByUserId,
      });
      const copied: DefinitionRow[] = [];
      for (const definition of await latestDefinitions(tx, source.id)) {
        copied.push(
          await copyDefinition(tx, definition, {
            templateId: clone.id,
            businessId: `${req.businessIdPrefix}.${definition.business_id}`,
            createdByUserId,
          }),
        );
      }
      await writeAuditRecord(tx, requestContext(ctx.values), {
        organizationId: app.organizationId,
        appId: app.appId,
        action: "template.cloned",
        resourceType: "template",
        resourceId: clone.id,
        metadata: {
          source_template_id: source.id,
          business_id_prefix: req.businessIdPrefix,
          definitions: copied.length,
        },
      });
      return { templateId: clone.id, definitions: copied };
    });
    return create(CloneTemplateResponseSchema, {
      templateId,
      definitions: definitions.map(definitionMessage),
    });
  };
}
