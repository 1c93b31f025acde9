import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { newId, requestContext, withTransaction, writeAuditRecord } from "@evalp/kit";
import {
  type CreateTemplateRequest,
  type CreateTemplateResponse,
  CreateTemplateResponseSchema,
} from "@evalp/proto/platform/v1/template";
import type { RequireApp } from "../app-check.js";
import { contentKind, insertDefinition } from "../db/definitions.js";
import { type DefinitionRow, templateMessage } from "../db/rows.js";
import { insertTemplate } from "../db/templates.js";
import type { Deps } from "../deps.js";

/** A template with its first definitions (revision 1 each). */
export function createTemplate(deps: Deps, requireApp: RequireApp) {
  return async (req: CreateTemplateRequest, ctx: HandlerContext): Promise<CreateTemplateResponse> => {
    const app = await requireApp(req.app, ctx);
    const kinds = req.definitions.map((definition) => contentKind(definition.content));
    const template = await withTransaction(deps.pool, async (tx) => {
      const row = await insertTemplate(tx, {
        id: newId(),
        appId: app.appId,
        name: req.name,
        createdByUserId: req.createdByUserId ?? null,
      });
      const definitions: DefinitionRow[] = [];
      for (const [index, input] of req.definitions.entries()) {
        definitions.push(
          await insertDefinition(tx, {
            templateId: row.id,
            appId: app.appId,
            input,
            kind: kinds[index] as string,
            createdByUserId: req.createdByUserId,
          }),
        );
      }
      await writeAuditRecord(tx, requestContext(ctx.values), {
        organizationId: app.organizationId,
        appId: app.appId,
        action: "template.created",
        resourceType: "template",
        resourceId: row.id,
        metadata: {
          name: row.name,
          definitions: definitions.map((d) => ({ id: d.id, business_id: d.business_id })),
        },
      });
      return templateMessage(row, definitions);
    });
    return create(CreateTemplateResponseSchema, { template });
  };
}
