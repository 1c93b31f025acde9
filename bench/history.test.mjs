import { describe, expect, it } from "vitest";
import { compareWithHistory } from "./history.mjs";

const settings = { ROUNDS: 3, ROUND_SECONDS: 3 };

/** A case's summary entry as bench/report.mjs makes it. */
function entry(id, { rps, ratio, missed = [] }) {
  return {
    id,
    rps,
    p50Ms: 1,
    p99Ms: 2,
    cpuUsPerRequest: { gateway: 100, autocannon: 5 },
    ...(ratio === undefined ? {} : { baseline: "A1", throughputRatio: ratio, p99DeltaMs: 1 }),
    targets: missed.map((target) => ({ target, met: false })),
  };
}

function run(commit, cases, { rounds = 3, seconds = 3 } = {}) {
  return {
    date: `2026-11-2${commit.length}T10:00:00.000Z`,
    commit,
    settings: { rounds, seconds },
    cases: Object.fromEntries(
      cases.map((c) => [
        c.id,
        { perSecond: c.rps, ...(c.ratio === undefined ? {} : { ratio: c.ratio }), missed: c.missed ?? [] },
      ]),
    ),
  };
}

describe("compareWithHistory", () => {
  it("compares a case with a baseline by its ratio, against the latest earlier run with the same settings", () => {
    const history = [
      run("aaa", [{ id: "A2", rps: 900, ratio: 0.6 }]),
      run("bbb", [{ id: "A2", rps: 800, ratio: 0.5 }]),
      run("ccc", [{ id: "A2", rps: 10, ratio: 0.1 }], { rounds: 1, seconds: 1 }),
    ];
    const [a2] = compareWithHistory([entry("A2", { rps: 700, ratio: 0.52 })], settings, history);
    expect(a2).toMatchObject({
      key: "ratio",
      value: 0.52,
      earlier: { commit: "bbb", value: 0.5 },
      regressed: false,
    });
  });

  it("flags a fall of more than a tenth, and a target newly missed", () => {
    const history = [
      run("aaa", [
        { id: "C2", rps: 3000 },
        { id: "B1", rps: 500, ratio: 1.7 },
      ]),
    ];
    const [c2, b1] = compareWithHistory(
      [entry("C2", { rps: 2600 }), entry("B1", { rps: 500, ratio: 1.69, missed: ["B1/B1m ≥ 0.5"] })],
      settings,
      history,
    );
    expect(c2).toMatchObject({ key: "perSecond", value: 2600, regressed: true });
    expect(b1).toMatchObject({ regressed: true, newlyMissed: ["B1/B1m ≥ 0.5"] });
  });

  it("says there is nothing to compare a case with when no earlier run measured it", () => {
    const [c3] = compareWithHistory([entry("C3", { rps: 5000 })], settings, [
      run("aaa", [{ id: "A2", rps: 1 }]),
    ]);
    expect(c3).toEqual({ id: "C3", earlier: null });
  });
});
