import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Deadlines } from "./h2-deadlines.js";

describe("Deadlines", () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("expires each pending deadline at its time, in order, and none that was forgotten", () => {
    const deadlines = new Deadlines();
    const expired: string[] = [];
    const at = (name: string, ms: number) => deadlines.add(performance.now() + ms, () => expired.push(name));
    at("late", 90);
    at("early", 30);
    const forget = at("forgotten", 60);
    at("same", 30);
    forget();
    vi.advanceTimersByTime(29);
    expect(expired).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(["early", "same"]);
    vi.advanceTimersByTime(59);
    expect(expired).toEqual(["early", "same"]);
    vi.advanceTimersByTime(1);
    expect(expired).toEqual(["early", "same", "late"]);
  });

  it("is on time for a deadline earlier than every pending one", () => {
    const deadlines = new Deadlines();
    const expired: string[] = [];
    deadlines.add(performance.now() + 120, () => expired.push("later"));
    deadlines.add(performance.now() + 100, () => expired.push("sooner"));
    vi.advanceTimersByTime(100);
    expect(expired).toEqual(["sooner"]);
    vi.advanceTimersByTime(20);
    expect(expired).toEqual(["sooner", "later"]);
  });
});
