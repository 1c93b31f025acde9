import { sampleContents } from "@evalp/testing";
import { beforeAll, describe, expect, it } from "vitest";
import type { ApiClient } from "./support/client.js";
import { createTenant, expectError, type Tenant } from "./support/fixtures.js";
import { createBundle, moveBundle } from "./support/platform.js";
import { useStack } from "./support/stack.js";

/**
 * The preview's bounds (docs/expressions.md#limits) against the platform as it runs. The
 * amplification case: a scorecard of two axes each counting 9,999 `var` nodes that read one 200 KB
 * answer. Traced in full, that is 20,000 copies of the answer, about 4 GB of trace per preview;
 * bounded, the trace stays within its budget. The stack runs in this test's process, so this
 * process's peak resident memory is the platform's (and the gateway's, which relays the trace).
 */

/** One less than an expression's node limit (docs/expressions.md#limits): with their `agg`, 10,000. */
const VAR_NODES = 9_999;
/** The trace's budget (docs/expressions.md#the-trace). */
const TRACE_BUDGET_BYTES = 1024 * 1024;
const ANSWER_CHARS = 200_000;
/**
 * How much the peak resident memory may grow over the attack. Without the bounds one preview alone
 * serializes gigabytes; with them the trace is at most 1 MiB of JSON.
 */
const PEAK_GROWTH_LIMIT_BYTES = 256 * 1024 * 1024;

const context = useStack();
let api: ApiClient;
let attacker: Tenant;
let victim: Tenant;

beforeAll(async () => {
  ({ api } = context);
  attacker = await createTenant(api);
  victim = await createTenant(api);
});

/** The peak resident memory of this process so far, the stack's services included. */
const peakRss = () => process.resourceUsage().maxRSS * 1024;

const countingAxis = (id: string) => ({
  id,
  label: id,
  expr: {
    op: "agg",
    fn: "count",
    args: Array.from({ length: VAR_NODES }, () => ({ op: "var", path: "answers.a" })),
  },
  bands: [],
});

describe("preview bounds", () => {
  it("keeps the platform's memory bounded under the amplification case, and another tenant's preview answers", async () => {
    const amplifying = sampleContents();
    Object.assign(amplifying.scorecard, { axes: [countingAxis("first"), countingAxis("second")] });
    amplifying.report_template.sections = [];
    const { bundle: attack } = await createBundle(api, attacker, amplifying, "Amplifying");
    const { bundle: normal } = await createBundle(api, victim, undefined, "Normal");
    const attackBody = {
      answers: { a: "x".repeat(ANSWER_CHARS) },
      context: {},
      respondent_id: "attacker",
      signals: {},
    };
    const preview = (tenant: Tenant, bundleId: string, body: unknown) =>
      api.post(`${tenant.app}/bundles/${bundleId}/preview`, body, { token: tenant.token });

    const before = peakRss();
    const attacks = Array.from({ length: 3 }, () => preview(attacker, attack.id, attackBody));
    const honest = preview(victim, normal.id, {
      answers: { q1: { value: 4 }, q3: { value: 2 } },
      context: { region: "us" },
      respondent_id: "r-1",
      signals: {},
    });
    const [answered, ...attacked] = await Promise.all([honest, ...attacks]);
    const growth = peakRss() - before;

    // The other tenant's preview is answered, and right.
    expect(answered?.status, answered?.text).toBe(200);
    expect(answered?.body.report.axes).toEqual([
      { axis: "experience", label: "Experience", score: 40, band_id: "senior", band_label: "Senior" },
      { axis: "skill", label: "Skill", score: 2, band_id: "low", band_label: "Low" },
    ]);

    // The attack's previews are answered in full, with a bounded trace.
    for (const response of attacked) {
      expect(response.status, response.text.slice(0, 500)).toBe(200);
      expect(response.body.report.axes.map((axis: { score: number }) => axis.score)).toEqual([
        VAR_NODES,
        VAR_NODES,
      ]);
      const { trace } = response.body;
      expect(Buffer.byteLength(JSON.stringify(trace))).toBeLessThanOrEqual(TRACE_BUDGET_BYTES + 1024);
      expect(trace.truncated).toBe(true);
      const recorded = trace.axes.first.length + trace.axes.second.length;
      // Every step evaluated is either in the trace or counted: 2 × (9,999 vars + 1 agg).
      expect(recorded + trace.omitted_steps).toBe(2 * (VAR_NODES + 1));
      expect(trace.axes.first[0]).toEqual({
        path: "/args/0",
        op: "var",
        value: null,
        value_omitted: { type: "string", size: ANSWER_CHARS },
      });
    }
    expect(growth, `the peak RSS grew by ${Math.round(growth / 1048576)} MiB`).toBeLessThan(
      PEAK_GROWTH_LIMIT_BYTES,
    );
  }, 120_000);

  it("answers 413 payload_too_large when answers, context and signals together pass the limit", async () => {
    const { bundle } = await createBundle(api, victim, undefined, "Limited");
    // 150 KB of answers and 150 KB of context: each under the limit, together over it.
    const half = "y".repeat(150_000);
    const response = await api.post(
      `${victim.app}/bundles/${bundle.id}/preview`,
      { answers: { q1: { text: half } }, context: { note: half }, respondent_id: "r", signals: {} },
      { token: victim.token },
    );
    const detail = expectError(response, 413, "payload_too_large");
    expect(detail.context).toEqual({ limit: 262_144, size: expect.any(Number) });
    expect(detail.context.size).toBeGreaterThan(300_000);
    // Just under the limit is previewed.
    const under = await api.post(
      `${victim.app}/bundles/${bundle.id}/preview`,
      { answers: { q1: { text: "z".repeat(250_000) } }, context: {}, respondent_id: "r", signals: {} },
      { token: victim.token },
    );
    expect(under.status, under.text.slice(0, 500)).toBe(200);
    // The API document says so on the route.
    const document = await api.get("/openapi.json");
    const route =
      document.body.paths["/v1/organizations/{organization_id}/apps/{app_id}/bundles/{bundle_id}/preview"]
        .post;
    expect(route.responses["413"].description).toContain("preview's limit");
  }, 60_000);

  it("refuses a scorecard over 100 axes when it is validated and when it is previewed", async () => {
    const contents = sampleContents();
    const extra = Array.from({ length: 99 }, (_, i) => ({
      id: `extra${i}`,
      label: "Extra",
      expr: { op: "lit", value: 1 },
      bands: [],
    }));
    Object.assign(contents.scorecard, { axes: [...contents.scorecard.axes, ...extra] });
    const { bundle } = await createBundle(api, victim, contents, "Too many axes");
    const reason = "scorecard has more than 100 axes";
    const validated = await moveBundle(api, victim, bundle.id, "validated");
    expect(expectError(validated, 422, "bundle_invalid").context.errors).toEqual([
      { component: "scorecard", path: "/axes", reason },
    ]);
    const preview = await api.post(
      `${victim.app}/bundles/${bundle.id}/preview`,
      { answers: {}, context: {}, respondent_id: "r", signals: {} },
      { token: victim.token },
    );
    expect(expectError(preview, 422, "expression_invalid").context).toEqual({ path: "/axes", reason });
  });
});
