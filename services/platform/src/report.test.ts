import { describe, expect, it } from "vitest";
import { buildReport, mergedContext } from "./report.js";

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
