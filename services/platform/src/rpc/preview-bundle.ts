import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ExpressionInvalidError } from "@evalp/expr";
import { AppError } from "@evalp/kit";
import {
  type PreviewBundleRequest,
  type PreviewBundleResponse,
  PreviewBundleResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { bundleContents, findBundle } from "../db/bundles.js";
import type { Deps } from "../deps.js";
import { scoreContents } from "../report.js";

/**
 * #10: runs the bundle's scorecard against the given answers, context (over the context
 * component's defaults) and signals, and answers the report and its trace. Writes nothing.
 * A malformed expression (or a scorecard past the scorecard limits) is 422 `expression_invalid`
 * with its path from the scorecard's root; inputs over `PREVIEW_INPUT_LIMIT_BYTES` together are
 * 413 `payload_too_large`. The evaluation itself is bounded by the expression package: its trace
 * has a byte budget and its comparisons a work limit (docs/expressions.md#limits).
 */
export function previewBundle(deps: Deps, requireApp: RequireApp) {
  return async (req: PreviewBundleRequest, ctx: HandlerContext): Promise<PreviewBundleResponse> => {
    const app = await requireApp(req.app, ctx);
    checkInputSize(req, deps.config.PREVIEW_INPUT_LIMIT_BYTES);
    const bundle = await findBundle(deps.pool, app.appId, req.bundleId);
    if (bundle.status === "archived") {
      throw new AppError("invalid_transition", "An archived bundle cannot be previewed.", {
        from: "archived",
        to: "preview",
        allowed: [],
      });
    }
    const contents = await bundleContents(deps.pool, bundle);
    let scored: ReturnType<typeof scoreContents>;
    try {
      scored = scoreContents(bundle, contents, {
        answers: req.answers ?? {},
        context: req.context,
        signals: req.signals ?? {},
        respondentId: req.respondentId,
      });
    } catch (error) {
      if (error instanceof ExpressionInvalidError) {
        throw new AppError(
          "expression_invalid",
          `The scorecard is malformed at ${error.path}: ${error.reason}`,
          {
            path: error.path,
            reason: error.reason,
          },
        );
      }
      throw error;
    }
    const { report, trace } = scored;
    return create(PreviewBundleResponseSchema, {
      report: report as unknown as JsonObject,
      trace: trace as unknown as JsonObject,
    });
  };
}

/**
 * Refuses inputs over `limit` bytes together (their UTF-8 JSON, as a client sends them), before the
 * bundle is read: what an evaluation keeps and compares grows with them.
 */
function checkInputSize(req: PreviewBundleRequest, limit: number): void {
  let size = 0;
  for (const part of [req.answers, req.context, req.signals]) {
    size += Buffer.byteLength(JSON.stringify(part ?? {}), "utf8");
  }
  if (size > limit) {
    throw new AppError(
      "payload_too_large",
      `The preview's answers, context and signals take ${size} bytes together; at most ${limit} are allowed.`,
      { limit, size },
    );
  }
}
