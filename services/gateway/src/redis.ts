import { Redis } from "ioredis";

/**
 * A Redis client that fails fast when Redis is down, so that a request needing Redis answers
 * 503 promptly instead of waiting: while the connection is down (Redis stopped, restarting,
 * unreachable) commands are refused at once rather than queued until the next reconnection
 * attempt, which took up to 1.5 s per command (and the rate limit and idempotency each issue
 * one); a command sent on a connection that stops answering gives up after 1 s. The client
 * keeps reconnecting in the background and serves again as soon as Redis answers. Commands
 * issued in the same turn of the event loop (the rate limit and idempotency of concurrent
 * requests) go out in one write: a socket write per command was a large share of a replay's cost.
 */
export function createRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    lazyConnect: false,
    // Reconnect attempts every 50 ms more, at most 2 s apart, without jitter: ioredis 6 backs off
    // exponentially to 5 s, which kept a gateway refusing for up to 5 s after Redis was back.
    retryStrategy: (attempt) => Math.min(attempt * 50, 2_000),
  });
  // Connection errors surface on the commands that need Redis; the event itself is not fatal.
  redis.on("error", () => {});
  return redis;
}
