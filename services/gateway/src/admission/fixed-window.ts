import type { RedisClient } from "../redis.js";

/** One fixed window's count and how long the window has left (ms). */
export type Window = { count: number; resetMs: number };

/**
 * Counts a hit in a fixed window, as a Lua function for scripts: INCR, an expiry set by the
 * window's first hit, and what is left of it — with commands Redis 6 has (managed Redis 6 refused
 * `EXPIRE … NX`). Returns the count and the window's remaining ms. round-trip.ts's script counts
 * the rate limit's windows with it too.
 */
export const HIT_FUNCTION = `
local function hit(key, windowMs)
  local count = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, windowMs); ttl = windowMs end
  return count, ttl
end
`;

/** One hit in one window: KEYS[1] the window, ARGV[1] its length in ms. */
const HIT = `${HIT_FUNCTION}
local count, ttl = hit(KEYS[1], tonumber(ARGV[1]))
return {count, ttl}
`;

type WindowRedis = RedisClient & { fixedWindowHit(...args: Array<string | number>): Promise<number[]> };

/** Counts hits in fixed windows of `windowMs` on `redis` (one script definition per client). */
export function fixedWindows(redis: RedisClient, windowMs: number) {
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
