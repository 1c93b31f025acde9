import { describe, expect, it } from "vitest";
import { leaseSize, redisKeys, windowLeases } from "./round-trip.js";

function clock(start = 1_000_000) {
  let at = start;
  return { now: () => at, advance: (ms: number) => (at += ms) };
}

describe("redisKeys", () => {
  it("keeps prefixes apart", () => {
    expect(redisKeys("a:").idempotencyLock("x")).toBe("a:idem:lock:{idem:x}");
    expect(redisKeys("b:").idempotencyLock("x")).toBe("b:idem:lock:{idem:x}");
    expect(redisKeys("a:").credentialWindow("h")).toBe("a:rl:cred:{cred:h}");
  });
});

describe("window leases", () => {
  it("takes a twentieth of a limit at once, and one count at a time below 40", () => {
    expect(leaseSize(600)).toBe(30);
    expect(leaseSize(6000)).toBe(300);
    expect(leaseSize(39)).toBe(1);
    expect(leaseSize(1)).toBe(1);
  });

  it("spends the counts after the one Redis gave this request, then asks again", () => {
    const time = clock();
    const leases = windowLeases(time.now);
    expect(leases.take("k")).toBeUndefined();
    // Redis granted counts 31..40 of the window; 31 was this request's.
    leases.keep("k", { count: 31, resetMs: 50_000 }, 10, 600);
    const spent = Array.from({ length: 9 }, () => leases.take("k")?.count);
    expect(spent).toEqual([32, 33, 34, 35, 36, 37, 38, 39, 40]);
    expect(leases.holds("k")).toBe(false);
    expect(leases.take("k")).toBeUndefined();
  });

  it("says how long the window has left, and holds nothing once it ended", () => {
    const time = clock();
    const leases = windowLeases(time.now);
    leases.keep("k", { count: 1, resetMs: 60_000 }, 30, 600);
    time.advance(20_000);
    expect(leases.take("k")).toEqual({ count: 2, resetMs: 40_000 });
    time.advance(40_000);
    expect(leases.take("k")).toBeUndefined();
  });

  it("never admits past the limit: counts past it refuse until the window ends", () => {
    const time = clock();
    const leases = windowLeases(time.now);
    // The lease straddles the limit of 100.
    leases.keep("k", { count: 96, resetMs: 30_000 }, 10, 100);
    const counts = Array.from({ length: 20 }, () => leases.take("k")?.count ?? 0);
    expect(counts.filter((count) => count <= 100)).toHaveLength(4);
    // Past the lease's end, a window past its limit still answers here (refused) without Redis.
    expect(counts.at(-1)).toBe(116);
    time.advance(30_000);
    expect(leases.take("k")).toBeUndefined();
  });

  it("keeps nothing when it takes one count at a time, unless the window is past its limit", () => {
    const leases = windowLeases(clock().now);
    leases.keep("exact", { count: 5, resetMs: 60_000 }, 1, 10);
    expect(leases.holds("exact")).toBe(false);
    leases.keep("over", { count: 11, resetMs: 60_000 }, 1, 10);
    expect(leases.take("over")?.count).toBe(12);
  });
});
