import { Redis } from "ioredis";

/**
 * A Redis client that fails fast when Redis is down (one retry, 1 s per command), so that a
 * request needing Redis answers 503 promptly instead of hanging in the offline queue.
 */
export function createRedis(url: string): Redis {
  const redis = new Redis(url, {
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    lazyConnect: false,
  });
  // Connection errors surface on the commands that need Redis; the event itself is not fatal.
  redis.on("error", () => {});
  return redis;
}
