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
import type { RequireApp } from "../app-scope.js";
import { bundleFingerprint } from "../content-hash.js";
import {
  BUNDLE_COLUMNS,
  type BundleRow,
  bundleMessage,
  COMPONENT_FIELDS,
  type DefinitionRow,
} from "../db/rows.js";
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
      const found = await tx.query<Pick<DefinitionRow, "id" | "app_id" | "kind" | "content_hash">>(
        "SELECT id, app_id, kind, content_hash FROM definitions WHERE id = ANY($1)",
        [ids.filter(isUuid)],
      );
      const byId = new Map(found.rows.map((definition) => [definition.id, definition]));
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
      // Revisions of one name are numbered one after the other.
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [
        `bundle:${app.appId}:${req.name}`,
      ]);
      const inserted = await tx.query<BundleRow>(
        `INSERT INTO bundles (id, app_id, name, status, fingerprint, revision, ${COMPONENT_FIELDS.map(([f]) => f).join(", ")},
           created_by_user_id)
         SELECT $1, $2, $3, 'draft', $4, 1 + count(*), $5, $6, $7, $8, $9, $10, $11
         FROM bundles WHERE app_id = $2 AND name = $3
         RETURNING ${BUNDLE_COLUMNS}`,
        [newId(), app.appId, req.name, bundleFingerprint(hashes), ...ids, req.createdByUserId ?? null],
      );
      const bundle = inserted.rows[0] as BundleRow;
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
