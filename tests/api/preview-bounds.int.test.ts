import { readFileSync } from "node:fs";
import { sampleContents } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiClient, apiClient } from "./support/client.js";
import { createTenant, expectError, type Tenant } from "./support/fixtures.js";
import { createBundle } from "./support/platform.js";
import { type PlatformProcesses, startProcesses } from "./support/processes.js";

/**
 * The preview's bounds (docs/expressions.md#limits) against the platform as it runs: its own
 * processes, so that the platform's memory is that of a process of its own. The amplification case:
 * a scorecard of two axes each counting 9,999 `var` nodes that read one 200 KB answer. Traced in full,
 * that is 20,000 copies of the answer, about 4 GB of trace; bounded, the trace stays within its budget.
 */

/** One less than an expression's node limit (docs/expressions.md#limits): with their `agg`, 10,000. */
const VAR_NODES = 9_999;
/** The trace's budget (docs/expressions.md#the-trace). */
const TRACE_BUDGET_BYTES = 1024 * 1024;
const ANSWER_CHARS = 200_000;
/**
 * How much the platform's peak resident memory may grow over the attack. Without the bounds one
 * preview alone serializes gigabytes; with them the trace is at most 1 MiB of JSON.
 */
const PEAK_GROWTH_LIMIT_BYTES = 256 * 1024 * 1024;

let platform: PlatformProcesses;
let api: ApiClient;
let attacker: Tenant;
let victim: Tenant;

beforeAll(async () => {
  platform = await startProcesses();
  api = apiClient(platform.url);
  attacker = await createTenant(api);
  victim = await createTenant(api);
}, 120_000);

afterAll(async () => {
  await platform?.close();
});

/** The peak resident memory of the platform's process so far (Linux: VmHWM of /proc/<pid>/status). */
function platformPeakRss(): number {
  const pid = platform.child("platform")?.pid;
  if (pid === undefined) throw new Error("the platform process is not running");
  const line = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!line?.[1]) throw new Error("no VmHWM in the platform's /proc status");
  return Number(line[1]) * 1024;
}

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

    const before = platformPeakRss();
    const attacks = Array.from({ length: 3 }, () => preview(attacker, attack.id, attackBody));
    const honest = preview(victim, normal.id, {
      answers: { q1: { value: 4 }, q3: { value: 2 } },
      context: { region: "us" },
      respondent_id: "r-1",
      signals: {},
    });
    const [answered, ...attacked] = await Promise.all([honest, ...attacks]);
    const growth = platformPeakRss() - before;

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
    expect(platform.child("platform")?.exitCode ?? null).toBeNull();
    expect(growth, `the platform's peak RSS grew by ${Math.round(growth / 1048576)} MiB`).toBeLessThan(
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
  }, 60_000);
});
