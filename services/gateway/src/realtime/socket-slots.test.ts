import { randomBytes } from "node:crypto";
import { AppError } from "@evalp/kit";
import { afterAll, describe, expect, it, vi } from "vitest";
import { createRedis } from "../redis.js";
import { createSocketSlots } from "./socket-slots.js";

// Real Redis (the run's, as every test finds it): the counts are its sorted sets and Lua.
const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const prefix = `evalp-test:${randomBytes(6).toString("hex")}:`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof AppError ? { code: error.code, context: error.context } : error),
  );

describe("socket slots", () => {
  it("keep a held socket counted past its lease by renewing it, while a lapsed one stops counting", async () => {
    if (redis.status !== "ready") await new Promise((ready) => redis.once("ready", ready));
    const leaseMs = 600;
    const slots = createSocketSlots(redis, { prefix, perSession: 2, perAddress: 10, leaseMs });
    // Held and renewed, as an open socket's.
    const held = await slots.claim("session-a", "198.51.100.1");
    slots.take(held);
    // As a gateway that died leaves one: claimed, never renewed.
    const orphans = createSocketSlots(redis, { prefix, perSession: 2, perAddress: 10, leaseMs: leaseMs });
    orphans.close();
    await orphans.claim("session-a", "198.51.100.2");
    expect(await refusal(slots.claim("session-a", "198.51.100.3"))).toEqual({
      code: "rate_limited",
      context: { limit: 2, reason: "sockets_per_session", retry_after_seconds: 5 },
    });
    // Once the orphan's lease lapsed (and so would the held one's, were it not renewed) one
    // place frees, and only one.
    const third = await vi.waitFor(() => slots.claim("session-a", "198.51.100.3"), {
      timeout: 10 * leaseMs,
      interval: leaseMs / 4,
    });
    expect(await refusal(slots.claim("session-a", "198.51.100.4"))).toMatchObject({ code: "rate_limited" });
    await slots.release(held);
    await slots.release(third);
    expect(await redis.exists(`${prefix}sockets:session:session-a`)).toBe(0);
    slots.close();
  });
});
