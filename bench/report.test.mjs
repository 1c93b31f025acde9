import { describe, expect, it } from "vitest";
import { summarize } from "./report.mjs";

/** One case's measurement in a round, as bench/run.mjs keeps it. */
function measured(rps, gatewayUs, equalRate) {
  return {
    rps,
    non2xx: 0,
    errors: 0,
    cpuUsPerRequest: { gateway: gatewayUs },
    fixed: { offered: 100, achieved: 100, p50: 1, p99: 2, non2xx: 0, errors: 0 },
    ...(equalRate ? { equalRate } : {}),
  };
}

const B1 = {
  id: "B1",
  what: "keyed write",
  baseline: "A2",
  targets: { cpuOf: { process: "gateway", vs: "A2", maxRatio: 2 } },
};

describe("summarize: a CPU target", () => {
  it("is decided at saturation, and also read with both cases at one rate", () => {
    const round = (caseUs, vsUs, atRate) => ({
      order: ["B1", "A2"],
      measured: {
        A2: measured(3000, 200),
        B1: measured(600, caseUs, {
          rate: atRate,
          cpuUsPerRequest: { gateway: 700 },
          vsCpuUsPerRequest: { gateway: vsUs },
        }),
      },
    });
    // Saturation ratios 2.5, 2.25, 3 (median 2.5); at one rate 700/350, 700/500, 700/280 (median 2).
    const entry = summarize(B1, [round(500, 350, 300), round(450, 500, 310), round(600, 280, 290)]);
    expect(entry.cpuRatio.ratio).toBe(2.5);
    expect(entry.cpuRatio.atEqualRate).toEqual({ rate: 300, ratio: 2 });
    expect(entry.targets).toEqual([
      { target: "gateway CPU ≤ 2 × A2's (2.50 ×; 2.00 × with both at 300/s)", met: false },
    ]);
  });

  it("says nothing of an equal rate where the run measured none", () => {
    const entry = summarize(B1, [
      { order: ["B1", "A2"], measured: { A2: measured(3000, 200), B1: measured(600, 300) } },
    ]);
    expect(entry.cpuRatio.atEqualRate).toBeUndefined();
    expect(entry.targets).toEqual([{ target: "gateway CPU ≤ 2 × A2's (1.50 ×)", met: true }]);
  });
});
