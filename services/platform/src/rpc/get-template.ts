import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  type GetTemplateRequest,
  type GetTemplateResponse,
  GetTemplateResponseSchema,
} from "@evalp/proto/platform/v1/template";
import type { RequireApp } from "../app-check.js";
import { templateMessage } from "../db/rows.js";
import { findTemplate, templateDefinitions } from "../db/templates.js";
import type { Deps } from "../deps.js";

/** A template with every revision of its definitions. */
export function getTemplate(deps: Deps, requireApp: RequireApp) {
  return async (req: GetTemplateRequest, ctx: HandlerContext): Promise<GetTemplateResponse> => {
    const app = await requireApp(req.app, ctx);
    const template = await findTemplate(deps.pool, app.appId, req.templateId);
    const definitions = await templateDefinitions(deps.pool, template.id);
    return create(GetTemplateResponseSchema, { template: templateMessage(template, definitions) });
  };
}
