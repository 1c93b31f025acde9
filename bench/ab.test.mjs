import { describe, expect, it } from "vitest";
import { comparePairs } from "./ab.mjs";

const figures = (rps, ratio, cpu) => ({ rps, ratio, cpu });

describe("comparePairs", () => {
  it("compares each figure within its pair and gives the median change and its spread", () => {
    // The machine slows down from pair to pair; this tree is 10 % faster in each.
    const pairs = [
      { base: { A2: figures(1000, 0.4, 500) }, head: { A2: figures(1100, 0.44, 450) } },
      { base: { A2: figures(800, 0.4, 600) }, head: { A2: figures(880, 0.44, 540) } },
      { base: { A2: figures(600, 0.4, 700) }, head: { A2: figures(660, 0.44, 630) } },
    ];
    const rows = comparePairs(pairs);
    const rps = rows.find((row) => row.figure === "rps");
    expect(rps).toMatchObject({ id: "A2", base: 800, head: 880 });
    expect(rps.change).toBeCloseTo(1.1, 10);
    expect(rps.spread).toBeCloseTo(0, 10);
    expect(rows.find((row) => row.figure === "cpu").change).toBeCloseTo(0.9, 10);
  });

  it("leaves out a case one build did not measure, and a figure a case does not have", () => {
    const pairs = [
      {
        base: { A0: figures(9000, undefined, 10), H1: figures(5, 0.5, 1) },
        head: { A0: figures(9000, undefined, 10) },
      },
    ];
    const rows = comparePairs(pairs);
    expect(rows.map((row) => `${row.id} ${row.figure}`)).toEqual(["A0 rps", "A0 cpu"]);
  });
});
