import { describe, expect, it } from "vitest";
import { parseRetryAfter, retryDelay, retryPolicy } from "./retry.js";

describe("Retry-After", () => {
  const now = Date.parse("2026-11-25T10:00:00.000Z");

  it("reads delta seconds and HTTP dates, and nothing else", () => {
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("Wed, 25 Nov 2026 10:00:05 GMT", now)).toBe(5000);
    expect(parseRetryAfter("Wed, 25 Nov 2026 09:59:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter("-1", now)).toBeUndefined();
  });

  it("waits what the server asks, within the policy's limit, else gives up", () => {
    const policy = retryPolicy({ maxDelayMs: 10_000, baseDelayMs: 100 });
    expect(retryDelay("2", 1, policy, now)).toBe(2000);
    expect(retryDelay("10", 1, policy, now)).toBe(10_000);
    expect(retryDelay("11", 1, policy, now)).toBeUndefined();
  });

  it("backs off exponentially when the server names no wait, capped by the policy", () => {
    const policy = retryPolicy({ maxDelayMs: 350, baseDelayMs: 100 });
    expect([1, 2, 3, 4].map((retry) => retryDelay(null, retry, policy, now))).toEqual([100, 200, 350, 350]);
  });

  it("defaults to three tries; false means one", () => {
    expect(retryPolicy(undefined)).toEqual({ attempts: 3, maxDelayMs: 30_000, baseDelayMs: 500 });
    expect(retryPolicy(false).attempts).toBe(1);
    expect(retryPolicy({ attempts: 0 }).attempts).toBe(1);
  });
});
