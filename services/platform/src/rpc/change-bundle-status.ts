import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { validateBundleContents } from "@evalp/components";
import { AppError, requestContext, withTransaction, writeAuditRecord, writeOutboxEvent } from "@evalp/kit";
import {
  type ChangeBundleStatusRequest,
  type ChangeBundleStatusResponse,
  ChangeBundleStatusResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { bundleContents, findBundle, moveBundle } from "../db/bundles.js";
import { stampPublished } from "../db/definitions.js";
import { bundleMessage, COMPONENT_FIELDS } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { environmentIdsOf } from "../environments.js";
import { type BundleStatus, canMove, TRANSITIONS } from "../transitions.js";

/**
 * #9: moves a bundle along the contract's table (409 `invalid_transition` otherwise). Entering
 * `validated` checks all six contents and every expression (422 `bundle_invalid` with every
 * problem); the first publish stamps `published_at` on the bundle and its definitions. Each move
 * emits `bundle.status_changed` into every environment of the app, in the same transaction.
 */
export function changeBundleStatus(deps: Deps, requireApp: RequireApp) {
  return async (req: ChangeBundleStatusRequest, ctx: HandlerContext): Promise<ChangeBundleStatusResponse> => {
    const app = await requireApp(req.app, ctx);
    const to = req.status as BundleStatus;
    const environments = await environmentIdsOf(deps, app, ctx);
    const row = await withTransaction(deps.pool, async (tx) => {
      const bundle = await findBundle(tx, app.appId, req.bundleId, true);
      const from = bundle.status as BundleStatus;
      if (!canMove(from, to)) {
        throw new AppError("invalid_transition", `A ${from} bundle cannot become ${to}.`, {
          from,
          to,
          allowed: TRANSITIONS[from],
        });
      }
      if (to === "validated") {
        const problems = validateBundleContents(await bundleContents(tx, bundle));
        if (problems.length > 0) {
          throw new AppError("bundle_invalid", "The bundle's components are not valid.", {
            errors: problems,
          });
        }
      }
      const moved = await moveBundle(tx, bundle.id, to);
      if (to === "published") {
        await stampPublished(
          tx,
          COMPONENT_FIELDS.map(([field]) => moved[field]),
          moved.published_at,
        );
      }
      for (const environmentId of environments) {
        await writeOutboxEvent(tx, {
          type: "bundle.status_changed",
          environmentId,
          data: {
            bundle_id: moved.id,
            app_id: moved.app_id,
            name: moved.name,
            revision: moved.revision,
            fingerprint: moved.fingerprint,
            from,
            to,
          },
        });
      }
      await writeAuditRecord(tx, requestContext(ctx.values), {
        organizationId: app.organizationId,
        appId: app.appId,
        action: "bundle.status_changed",
        resourceType: "bundle",
        resourceId: moved.id,
        metadata: { from, to, name: moved.name, revision: moved.revision },
      });
      return moved;
    });
    return create(ChangeBundleStatusResponseSchema, { bundle: bundleMessage(row) });
  };
}
