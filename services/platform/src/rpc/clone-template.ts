import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, requestContext, withTransaction, writeAuditRecord } from "@evalp/kit";
import {
  type CloneTemplateRequest,
  type CloneTemplateResponse,
  CloneTemplateResponseSchema,
} from "@evalp/proto/platform/v1/template";
import type { RequireApp } from "../app-scope.js";
import { DEFINITION_COLUMNS, type DefinitionRow, definitionMessage, type TemplateRow } from "../db/rows.js";
import { findTemplate } from "../db/templates.js";
import type { Deps } from "../deps.js";

/**
 * #11: a new template holding the latest revision of every (business_id, locale) of the source,
 * with new ids, `business_id` = prefix + "." + the old one, revision 1, the same content and
 * hash, and no `published_at` (contract §5b).
 */
export function cloneTemplate(deps: Deps, requireApp: RequireApp) {
  return async (req: CloneTemplateRequest, ctx: HandlerContext): Promise<CloneTemplateResponse> => {
    const app = await requireApp(req.app, ctx);
    const { templateId, definitions } = await withTransaction(deps.pool, async (tx) => {
      const source = await findTemplate(tx, app.appId, req.templateId);
      const inserted = await tx.query<TemplateRow>(
        `INSERT INTO templates (id, app_id, name, created_by_user_id) VALUES ($1, $2, $3, $4)
         RETURNING id, app_id, name, created_at`,
        [newId(), app.appId, source.name, req.createdByUserId ?? null],
      );
      const clone = inserted.rows[0] as TemplateRow;
      const latest = await tx.query<DefinitionRow>(
        `SELECT DISTINCT ON (business_id, locale) ${DEFINITION_COLUMNS} FROM definitions WHERE template_id = $1
         ORDER BY business_id, locale, revision DESC`,
        [source.id],
      );
      const copied: DefinitionRow[] = [];
      for (const definition of latest.rows) {
        const inserted = await tx.query<DefinitionRow>(
          `INSERT INTO definitions (id, template_id, app_id, business_id, locale, name, kind, content, content_hash,
             revision, created_by_user_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10) RETURNING ${DEFINITION_COLUMNS}`,
          [
            newId(),
            clone.id,
            definition.app_id,
            `${req.businessIdPrefix}.${definition.business_id}`,
            definition.locale,
            definition.name,
            definition.kind,
            definition.content,
            definition.content_hash,
            req.createdByUserId ?? null,
          ],
        );
        copied.push(inserted.rows[0] as DefinitionRow);
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
