import { describe, expect, it } from "vitest";
import { Deadlines } from "./h2-deadlines.js";
import { waitFor } from "./test-echo.js";

describe("Deadlines", () => {
  it("expires each pending deadline at its time, in order, and none that was forgotten", async () => {
    const deadlines = new Deadlines();
    const start = performance.now();
    const expired: [string, number][] = [];
    const at = (name: string, ms: number) =>
      deadlines.add(start + ms, () => expired.push([name, performance.now() - start]));
    at("late", 90);
    at("early", 30);
    const forget = at("forgotten", 60);
    at("same", 30);
    forget();
    await waitFor(() => expired.length === 3);
    expect(expired.map(([name]) => name)).toEqual(["early", "same", "late"]);
    expect(expired[0]?.[1]).toBeGreaterThanOrEqual(30);
    expect(expired[2]?.[1]).toBeGreaterThanOrEqual(90);
    // A deadline added after the earliest was armed, earlier than every pending one, is still on time.
    at("sooner", 120);
    at("soonest", 100);
    await waitFor(() => expired.length === 5);
    expect(expired.slice(3).map(([name]) => name)).toEqual(["soonest", "sooner"]);
  });
});
