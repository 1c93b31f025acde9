import {
  type AxisResult,
  compileScorecard,
  type ExpressionProblem,
  evaluateScorecard,
  type ScorecardResult,
} from "@evalp/expr";

type ReportTemplateContent = { title?: unknown; sections?: unknown };

/**
 * The preview report (docs/expressions.md): the scorecard's axis results, with the report template's
 * title and its sections each listing the axis results it names. A template of a bundle that was
 * never validated may be malformed; what cannot be read is left out rather than failing preview.
 */
export function buildReport(options: {
  bundleId: string;
  fingerprint: string;
  respondentId: string;
  result: ScorecardResult;
  template: unknown;
}) {
  const template = (options.template ?? {}) as ReportTemplateContent;
  const byAxis = new Map<string, AxisResult>(options.result.axes.map((axis) => [axis.axis, axis]));
  const sections = Array.isArray(template.sections) ? template.sections : [];
  return {
    bundle_id: options.bundleId,
    fingerprint: options.fingerprint,
    respondent_id: options.respondentId,
    axes: options.result.axes,
    title: typeof template.title === "string" ? template.title : null,
    sections: sections
      .filter(
        (section): section is { id: unknown; title: unknown; axes?: unknown } =>
          typeof section === "object" && section !== null,
      )
      .map((section) => ({
        id: section.id,
        title: section.title,
        axes: (Array.isArray(section.axes) ? section.axes : [])
          .map((axis) => byAxis.get(String(axis)))
          .filter((axis): axis is AxisResult => axis !== undefined),
      })),
  };
}

/** The context an evaluation sees: the context component's defaults, overridden by what was given. */
export function mergedContext(
  component: unknown,
  given: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const variables = (component as { variables?: unknown } | null)?.variables;
  const defaults = variables && typeof variables === "object" && !Array.isArray(variables) ? variables : {};
  return { ...(defaults as Record<string, unknown>), ...(given ?? {}) };
}

/** What a bundle's scorecard is run against: preview's request, or an ended interview's record. */
export type ScoreInput = {
  answers: Record<string, unknown>;
  context: Record<string, unknown> | undefined;
  signals: Record<string, unknown>;
  respondentId: string;
};

/**
 * Runs a bundle's scorecard against `input` (the context over the context component's defaults)
 * and builds the report: preview and an interview's result both score through here, so that they
 * agree field for field. Throws `ExpressionInvalidError` when the scorecard is malformed.
 */
export function scoreContents(
  bundle: { id: string; fingerprint: string },
  contents: { scorecard: unknown; context: unknown; report_template: unknown },
  input: ScoreInput,
) {
  const scorecard = compileScorecard(contents.scorecard);
  const result = evaluateScorecard(scorecard, {
    answers: input.answers,
    context: mergedContext(contents.context, input.context),
    signals: input.signals,
  });
  const report = buildReport({
    bundleId: bundle.id,
    fingerprint: bundle.fingerprint,
    respondentId: input.respondentId,
    result,
    template: contents.report_template,
  });
  return { report, trace: result.trace };
}

/**
 * The report of a scorecard that could not be evaluated (an interview's result must exist all the
 * same): the axes that can be named (an object with a string id), each with a null score and
 * band, laid out by the report template as preview lays them out, and the problems as the trace's
 * `errors`.
 */
export function unscoredReport(
  bundle: { id: string; fingerprint: string },
  contents: { scorecard: unknown; report_template: unknown },
  respondentId: string,
  problems: readonly ExpressionProblem[],
) {
  const axes = (contents.scorecard as { axes?: unknown } | null)?.axes;
  const named = (Array.isArray(axes) ? axes : []).filter(
    (axis): axis is { id: string; label?: unknown } =>
      typeof axis === "object" && axis !== null && typeof (axis as { id?: unknown }).id === "string",
  );
  const results: AxisResult[] = named.map((axis) => ({
    axis: axis.id,
    label: typeof axis.label === "string" ? axis.label : axis.id,
    score: null,
    band_id: null,
    band_label: null,
  }));
  const report = buildReport({
    bundleId: bundle.id,
    fingerprint: bundle.fingerprint,
    respondentId,
    result: { axes: results, trace: { axes: {} } },
    template: contents.report_template,
  });
  return {
    report,
    trace: { axes: Object.fromEntries(results.map((axis) => [axis.axis, []])), errors: problems },
  };
}
