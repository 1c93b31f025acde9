import { describe, expect, it } from "vitest";
import { buildReport, mergedContext, scoreContents, unscoredReport } from "./report.js";

const axes = [
  { axis: "a", label: "A", score: 1, band_id: "x", band_label: "X" },
  { axis: "b", label: "B", score: null, band_id: null, band_label: null },
];

describe("buildReport", () => {
  it("lays the axis results out by the report template's sections", () => {
    const report = buildReport({
      bundleId: "bundle",
      fingerprint: "sha256:f",
      respondentId: "r",
      result: { axes, trace: { axes: {} } },
      template: {
        kind: "report_template",
        title: "T",
        sections: [{ id: "s", title: "S", axes: ["b", "a", "missing"] }],
      },
    });
    expect(report).toEqual({
      bundle_id: "bundle",
      fingerprint: "sha256:f",
      respondent_id: "r",
      axes,
      title: "T",
      sections: [{ id: "s", title: "S", axes: [axes[1], axes[0]] }],
    });
  });

  it("survives a malformed template of a bundle never validated", () => {
    const report = buildReport({
      bundleId: "b",
      fingerprint: "f",
      respondentId: "r",
      result: { axes, trace: { axes: {} } },
      template: { sections: "nope" },
    });
    expect(report.title).toBeNull();
    expect(report.sections).toEqual([]);
  });
});

describe("mergedContext", () => {
  it("puts the given context over the component's defaults", () => {
    expect(mergedContext({ kind: "context", variables: { a: 1, b: 2 } }, { b: 3 })).toEqual({ a: 1, b: 3 });
    expect(mergedContext(null, { c: 1 })).toEqual({ c: 1 });
    expect(mergedContext({ variables: [1] }, undefined)).toEqual({});
  });
});

describe("unscoredReport", () => {
  it("answers every nameable axis with a null score, laid out by the template, and the problems as errors", () => {
    const problems = [{ path: "/axes/0/expr", reason: 'unknown op "nope"' }];
    const scored = unscoredReport(
      { id: "bundle", fingerprint: "sha256:f" },
      {
        scorecard: {
          kind: "scorecard",
          axes: [{ id: "a", label: "A", expr: { op: "nope" } }, { label: "no id" }, { id: "b" }],
        },
        report_template: {
          kind: "report_template",
          title: "T",
          sections: [{ id: "s", title: "S", axes: ["b", "a"] }],
        },
      },
      "r",
      problems,
    );
    const a = { axis: "a", label: "A", score: null, band_id: null, band_label: null };
    const b = { axis: "b", label: "b", score: null, band_id: null, band_label: null };
    expect(scored).toEqual({
      report: {
        bundle_id: "bundle",
        fingerprint: "sha256:f",
        respondent_id: "r",
        axes: [a, b],
        title: "T",
        sections: [{ id: "s", title: "S", axes: [b, a] }],
      },
      trace: { axes: { a: [], b: [] }, errors: problems },
    });
  });
});

describe("scoreContents", () => {
  it("merges the given context over the context component's defaults, as preview does", () => {
    const scored = scoreContents(
      { id: "bundle", fingerprint: "f" },
      {
        scorecard: {
          kind: "scorecard",
          axes: [
            {
              id: "x",
              label: "X",
              expr: {
                op: "calc",
                fn: "add",
                args: [
                  { op: "var", path: "context.base" },
                  { op: "var", path: "context.subject.profile.n" },
                ],
              },
              bands: [],
            },
          ],
        },
        context: { kind: "context", variables: { base: 10, subject: null } },
        report_template: { kind: "report_template", title: "T", sections: [] },
      },
      {
        answers: {},
        context: { subject: { external_id: "e", profile: { n: 2 } } },
        signals: {},
        respondentId: "r",
      },
    );
    expect(scored.report.axes).toEqual([
      { axis: "x", label: "X", score: 12, band_id: null, band_label: null },
    ]);
  });
});
