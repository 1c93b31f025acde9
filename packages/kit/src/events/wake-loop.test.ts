import { afterEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../telemetry/logger.js";
import { createWakeLoop, type PassResult } from "./wake-loop.js";

const logger = createLogger("test", "silent");

/** A loop over scripted passes, recording when each ran (fake time). */
function scripted(results: Array<PassResult | Error>, options: { intervalMs?: number } = {}) {
  const ran: number[] = [];
  const failed: unknown[] = [];
  const loop = createWakeLoop({
    logger,
    failure: "pass failed",
    intervalMs: options.intervalMs ?? 1_000,
    onError: (error) => failed.push(error),
    async pass() {
      ran.push(Date.now());
      const next = results.shift() ?? undefined;
      if (next instanceof Error) throw next;
      return next;
    },
  });
  return { loop, ran, failed };
}

describe("createWakeLoop", () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it("runs a pass at once, then after the interval, or after what the pass asked for", async () => {
    vi.useFakeTimers({ now: 0 });
    const { loop, ran } = scripted([undefined, 250, 0]);
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([0]);
    await vi.advanceTimersByTimeAsync(999);
    expect(ran).toEqual([0]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ran).toEqual([0, 1_000]);
    // 250 ms asked for, then 0: the pass after it runs at once.
    await vi.advanceTimersByTimeAsync(250);
    expect(ran).toEqual([0, 1_000, 1_250, 1_250]);
    await loop.stop();
  });

  it("is cut short by a wake-up, and a wake-up during a pass runs the next one right after it", async () => {
    vi.useFakeTimers({ now: 0 });
    let release: (() => void) | null = null;
    const ran: number[] = [];
    const loop = createWakeLoop({
      logger,
      failure: "pass failed",
      intervalMs: 10_000,
      async pass() {
        ran.push(Date.now());
        if (ran.length === 2) await new Promise<void>((resolve) => (release = resolve));
        return undefined;
      },
    });
    loop.start();
    await vi.advanceTimersByTimeAsync(100);
    loop.wake();
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([0, 100]);
    // Woken while the second pass runs: the third follows it without a sleep.
    loop.wake();
    await vi.advanceTimersByTimeAsync(50);
    (release as (() => void) | null)?.();
    await vi.advanceTimersByTimeAsync(0);
    expect(ran).toEqual([0, 100, 150]);
    await loop.stop();
  });

  it("backs off on failures, doubling up to its maximum, and resets after a success", async () => {
    vi.useFakeTimers({ now: 0 });
    const boom = new Error("down");
    const { loop, ran, failed } = scripted([boom, boom, boom, boom, undefined, boom], { intervalMs: 60_000 });
    loop.start();
    await vi.advanceTimersByTimeAsync(100 + 200 + 400 + 800);
    expect(ran).toEqual([0, 100, 300, 700, 1_500]);
    await vi.advanceTimersByTimeAsync(60_000);
    await vi.advanceTimersByTimeAsync(100);
    expect(ran).toEqual([0, 100, 300, 700, 1_500, 61_500, 61_600]);
    expect(failed).toHaveLength(5);
    await loop.stop();
  });

  it("stops: the sleep ends, the pass in hand finishes and no other starts", async () => {
    vi.useFakeTimers({ now: 0 });
    const { loop, ran } = scripted([]);
    loop.start();
    await vi.advanceTimersByTimeAsync(10);
    await loop.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ran).toEqual([0]);
  });
});
