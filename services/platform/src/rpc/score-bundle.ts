import { create, type JsonObject } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { ExpressionInvalidError, type ExpressionProblem } from "@evalp/expr";
import {
  type ScoreBundleRequest,
  type ScoreBundleResponse,
  ScoreBundleResponseSchema,
} from "@evalp/proto/platform/v1/bundle";
import type { RequireApp } from "../app-scope.js";
import { bundleContents, findBundle } from "../db/bundles.js";
import { bundleMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";
import { type ScoreInput, scoreContents } from "../report.js";

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
      scored = unscorable(bundle, contents, input, problems);
    }
    return create(ScoreBundleResponseSchema, {
      bundle: bundleMessage(bundle),
      report: scored.report as JsonObject,
      trace: scored.trace as JsonObject,
    });
  };
}

/**
 * The report of a scorecard that does not compile: the axes that can be named (an object with a
 * string id), each with a null score and band, the report template's title and sections as
 * preview would show them, and the problems as the trace's `errors`.
 */
function unscorable(
  bundle: { id: string; fingerprint: string },
  contents: { scorecard: unknown; context: unknown; report_template: unknown },
  input: ScoreInput,
  problems: readonly ExpressionProblem[],
) {
  const axes = (contents.scorecard as { axes?: unknown } | null)?.axes;
  const named = (Array.isArray(axes) ? axes : []).filter(
    (axis): axis is { id: string; label?: unknown } =>
      typeof axis === "object" && axis !== null && typeof (axis as { id?: unknown }).id === "string",
  );
  // An empty scorecard scores nothing and cannot fail: the template is shown over null axes.
  const empty = scoreContents(bundle, { ...contents, scorecard: { kind: "scorecard", axes: [] } }, input);
  const results = named.map((axis) => ({
    axis: axis.id,
    label: typeof axis.label === "string" ? axis.label : axis.id,
    score: null,
    band_id: null,
    band_label: null,
  }));
  const byAxis = new Map(results.map((axis) => [axis.axis, axis]));
  return {
    report: {
      ...empty.report,
      axes: results,
      sections: empty.report.sections.map((section, i) => ({
        ...section,
        axes: sectionAxes(contents.report_template, i)
          .map((id) => byAxis.get(id))
          .filter((axis) => axis !== undefined),
      })),
    },
    trace: { axes: Object.fromEntries(results.map((axis) => [axis.axis, []])), errors: problems },
  };
}

/** The axis ids the report template's `index`th section names. */
function sectionAxes(template: unknown, index: number): string[] {
  const sections = (template as { sections?: unknown } | null)?.sections;
  const section = Array.isArray(sections)
    ? sections.filter((s) => typeof s === "object" && s !== null)[index]
    : null;
  const axes = (section as { axes?: unknown } | null)?.axes;
  return Array.isArray(axes) ? axes.map(String) : [];
}
