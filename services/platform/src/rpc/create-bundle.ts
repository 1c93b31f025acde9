import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AppError,
  isUuid,
  newId,
  notFound,
  requestContext,
  withTransaction,
  writeAuditRecord,
} from "@evalp/kit";
import {
  type CreateBundleRequest,
  type CreateBundleResponse,
  CreateBundleResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { bundleFingerprint } from "../content-hash.js";
import { insertBundle } from "../db/bundles.js";
import { definitionKinds } from "../db/definitions.js";
import { bundleMessage, COMPONENT_FIELDS } from "../db/rows.js";
import type { Deps } from "../deps.js";

const PROTO_FIELD = {
  scorecard_version_id: "scorecardVersionId",
  experience_version_id: "experienceVersionId",
  context_version_id: "contextVersionId",
  guardrail_version_id: "guardrailVersionId",
  adaptive_policy_version_id: "adaptivePolicyVersionId",
  report_template_version_id: "reportTemplateVersionId",
} as const;

/**
 * A draft bundle of six definitions of this app, each of the kind its field names (404 with
 * `context.field` for one of another app, 422 `component_kind_mismatch` for a wrong kind).
 * `revision` counts the app's bundles of that name; `fingerprint` hashes the six contents.
 */
export function createBundle(deps: Deps, requireApp: RequireApp) {
  return async (req: CreateBundleRequest, ctx: HandlerContext): Promise<CreateBundleResponse> => {
    const app = await requireApp(req.app, ctx);
    const ids = COMPONENT_FIELDS.map(([field]) => (req.components?.[PROTO_FIELD[field]] ?? "") as string);
    const row = await withTransaction(deps.pool, async (tx) => {
      const found = await definitionKinds(tx, ids.filter(isUuid));
      const byId = new Map(found.map((definition) => [definition.id, definition]));
      const hashes: string[] = [];
      for (const [index, [field, kind]] of COMPONENT_FIELDS.entries()) {
        const definition = byId.get(ids[index] as string);
        if (!definition || definition.app_id !== app.appId) throw notFound("definition", { field });
        if (definition.kind !== kind) {
          throw new AppError(
            "component_kind_mismatch",
            `${field} names a ${definition.kind} definition, not a ${kind}.`,
            {
              field,
              expected: kind,
              actual: definition.kind,
            },
          );
        }
        hashes.push(definition.content_hash);
      }
      const bundle = await insertBundle(tx, {
        id: newId(),
        appId: app.appId,
        name: req.name,
        fingerprint: bundleFingerprint(hashes),
        components: ids,
        createdByUserId: req.createdByUserId ?? null,
      });
      await writeAuditRecord(tx, requestContext(ctx.values), {
        organizationId: app.organizationId,
        appId: app.appId,
        action: "bundle.created",
        resourceType: "bundle",
        resourceId: bundle.id,
        metadata: { name: bundle.name, revision: bundle.revision, fingerprint: bundle.fingerprint },
      });
      return bundle;
    });
    return create(CreateBundleResponseSchema, { bundle: bundleMessage(row) });
  };
}
