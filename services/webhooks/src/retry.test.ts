import { describe, expect, it } from "vitest";
import {
  type AttemptResult,
  CONTRACT_SCHEDULE_MS,
  decideOutcome,
  parseRetryAfter,
  parseSchedule,
  RETRY_AFTER_CAP_MS,
  shouldAutoDisable,
} from "./retry.js";

const NOW = new Date("2026-11-25T10:00:00.000Z");
const failure = (extra: Partial<Extract<AttemptResult, { ok: false }>> = {}): AttemptResult => ({
  ok: false,
  status: 500,
  error: "HTTP 500",
  durationMs: 3,
  ...extra,
});
const waitOf = (outcome: ReturnType<typeof decideOutcome>) =>
  outcome.kind === "retry" ? outcome.at.getTime() - NOW.getTime() : null;

describe("parseSchedule", () => {
  it("is the contract's schedule unless overridden", () => {
    expect(parseSchedule(undefined)).toEqual([...CONTRACT_SCHEDULE_MS]);
    expect(CONTRACT_SCHEDULE_MS.map((ms) => ms / 1000)).toEqual([5, 300, 1800, 7200, 18000, 36000, 36000]);
    expect(parseSchedule("200, 400")).toEqual([200, 400]);
  });
});

describe("decideOutcome", () => {
  it("delivers on success", () => {
    const result: AttemptResult = { ok: true, status: 204, durationMs: 1 };
    expect(decideOutcome({ result, attemptsInSeries: 1, schedule: [200], now: NOW })).toEqual({
      kind: "delivered",
    });
  });

  it("retries on the schedule with ±20 % jitter, then dead-letters: 8 attempts by default", () => {
    const schedule = parseSchedule(undefined);
    for (let attempt = 1; attempt <= 7; attempt++) {
      const base = schedule[attempt - 1] as number;
      const low = decideOutcome({
        result: failure(),
        attemptsInSeries: attempt,
        schedule,
        now: NOW,
        random: () => 0,
      });
      const high = decideOutcome({
        result: failure(),
        attemptsInSeries: attempt,
        schedule,
        now: NOW,
        random: () => 1,
      });
      expect(waitOf(low)).toBe(Math.round(base * 0.8));
      expect(waitOf(high)).toBe(Math.round(base * 1.2));
    }
    expect(decideOutcome({ result: failure(), attemptsInSeries: 8, schedule, now: NOW })).toEqual({
      kind: "dead_letter",
      reason: "HTTP 500",
    });
  });

  it("makes 3 attempts with 200,400", () => {
    const schedule = parseSchedule("200,400");
    expect(decideOutcome({ result: failure(), attemptsInSeries: 2, schedule, now: NOW }).kind).toBe("retry");
    expect(decideOutcome({ result: failure(), attemptsInSeries: 3, schedule, now: NOW }).kind).toBe(
      "dead_letter",
    );
  });

  it("honours Retry-After: the longer of it and the schedule, at most 2 h past the schedule", () => {
    const schedule = [5_000];
    const half = () => 0.5;
    const longer = failure({ status: 503, retryAfterMs: 60_000 });
    expect(
      waitOf(decideOutcome({ result: longer, attemptsInSeries: 1, schedule, now: NOW, random: half })),
    ).toBe(60_000);
    const shorter = failure({ status: 429, retryAfterMs: 1_000 });
    expect(
      waitOf(decideOutcome({ result: shorter, attemptsInSeries: 1, schedule, now: NOW, random: half })),
    ).toBe(5_000);
    const huge = failure({ status: 503, retryAfterMs: 24 * 3_600_000 });
    expect(
      waitOf(decideOutcome({ result: huge, attemptsInSeries: 1, schedule, now: NOW, random: half })),
    ).toBe(5_000 + RETRY_AFTER_CAP_MS);
  });

  it("treats 410 Gone as the end of the endpoint", () => {
    const gone = failure({ status: 410, error: "HTTP 410" });
    expect(decideOutcome({ result: gone, attemptsInSeries: 1, schedule: [200], now: NOW })).toEqual({
      kind: "gone",
    });
  });
});

describe("parseRetryAfter", () => {
  it("reads seconds and HTTP dates", () => {
    expect(parseRetryAfter("120", NOW)).toBe(120_000);
    expect(parseRetryAfter(new Date(NOW.getTime() + 30_000).toUTCString(), NOW)).toBe(30_000);
    expect(parseRetryAfter("soon", NOW)).toBeUndefined();
    expect(parseRetryAfter(undefined, NOW)).toBeUndefined();
  });
});

describe("shouldAutoDisable", () => {
  const hours = (n: number) => new Date(NOW.getTime() - n * 3_600_000);
  it("disables after 5 days of nothing but failures", () => {
    expect(shouldAutoDisable(null, NOW)).toBe(false);
    expect(shouldAutoDisable(hours(119), NOW)).toBe(false);
    expect(shouldAutoDisable(hours(120), NOW)).toBe(true);
  });
});
