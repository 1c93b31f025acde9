import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ExpressionInvalidError } from "@evalp/expr";
import {
  type ScoreBundleRequest,
  type ScoreBundleResponse,
  ScoreBundleResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-check.js";
import { bundleContents, findBundle } from "../db/bundles.js";
import { bundleMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { type ScoreInput, scoreContents, unscoredReport } from "../report.js";

/**
 * For the interview plane: scores an ended interview's answers, context and signals against a
 * bundle of any status, through preview's evaluation (docs/results.md). A result must exist even
 * when the scorecard cannot be evaluated, so a malformed one answers a report whose every score
 * is null and a trace whose `errors` list the problems, rather than an error that would leave
 * the evaluation unscored; so does an evaluation that throws.
 */
export function scoreBundle(deps: Deps, requireApp: RequireApp) {
  return async (req: ScoreBundleRequest, ctx: HandlerContext): Promise<ScoreBundleResponse> => {
    const app = await requireApp(req.app, ctx);
    const bundle = await findBundle(deps.pool, app.appId, req.bundleId);
    const contents = await bundleContents(deps.pool, bundle);
    const input: ScoreInput = {
      answers: req.answers ?? {},
      context: req.context,
      signals: req.signals ?? {},
      respondentId: req.respondentId,
    };
    let scored: { report: object; trace: object };
    try {
      scored = scoreContents(bundle, contents, input);
    } catch (error) {
      // Scoring is pure: whatever it throws is about the content (malformed, or past a bound of
      // evaluation), and the interview must still get its result.
      const problems =
        error instanceof ExpressionInvalidError
          ? error.problems
          : [
              {
                path: "",
                reason: error instanceof Error ? error.message : "the scorecard could not be evaluated",
              },
            ];
      deps.logger.warn({ err: error, bundle_id: bundle.id }, "scorecard not evaluated");
      scored = unscoredReport(bundle, contents, input.respondentId, problems);
    }
    return create(ScoreBundleResponseSchema, {
      bundle: bundleMessage(bundle),
      report: scored.report as JsonObject,
      trace: scored.trace as JsonObject,
    });
  };
}
