import type { Redis } from "ioredis";

/** One fixed window's count and how long the window has left (ms). */
export type Window = { count: number; resetMs: number };

/**
 * Counts a hit in a fixed window: INCR, an expiry set by the window's first hit, and what is
 * left of it — in one script, with commands Redis 6 has (managed Redis 6 refused `EXPIRE … NX`).
 * (The rate limit's windows are counted by admission.ts's script, with the same rule.)
 */
const HIT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
`;

type WindowRedis = Redis & { fixedWindowHit(...args: Array<string | number>): Promise<number[]> };

/** Counts hits in fixed windows of `windowMs` on `redis` (one script definition per client). */
export function fixedWindows(redis: Redis, windowMs: number) {
  const client = redis as WindowRedis;
  if (typeof client.fixedWindowHit !== "function") client.defineCommand("fixedWindowHit", { lua: HIT });
  return {
    /** Counts a hit on `key`: its window after the hit. */
    async hit(key: string): Promise<Window> {
      const [count = 0, resetMs = windowMs] = await client.fixedWindowHit(1, key, windowMs);
      return { count, resetMs };
    },
  };
}
