import type { Socket } from "node:net";
import { Redis } from "ioredis";

/**
 * A Redis client that fails fast when Redis is down, so that a request needing Redis answers
 * 503 promptly instead of waiting: while the connection is down (Redis stopped, restarting,
 * unreachable) commands are refused at once rather than queued until the next reconnection
 * attempt, which took up to 1.5 s per command (and the rate limit and idempotency each issue
 * one); a command sent on a connection that stops answering gives up after 1 s. The client
 * keeps reconnecting in the background and serves again as soon as Redis answers. Commands
 * issued in the same turn of the event loop (the rate limit and idempotency of concurrent
 * requests) go out in one write (`writeByTurn`).
 */
export function createRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: 1_000,
    connectTimeout: 2_000,
    lazyConnect: false,
    // Reconnect attempts every 50 ms more, at most 2 s apart, without jitter: ioredis 6 backs off
    // exponentially to 5 s, which kept a gateway refusing for up to 5 s after Redis was back.
    retryStrategy: (attempt) => Math.min(attempt * 50, 2_000),
  });
  writeByTurn(redis);
  // Connection errors surface on the commands that need Redis; the event itself is not fatal.
  redis.on("error", () => {});
  return redis;
}

/**
 * Holds the socket's writes from the first command of a turn of the event loop until the turn's
 * end (`cork` … `uncork` on `nextTick`), so that every command issued meanwhile leaves in one
 * write: a write per command was a large share of a replay's cost under load. ioredis's own
 * auto-pipelining batched the same way but built a pipeline, a promise and a callback per batch,
 * which cost a lone request (the common case below saturation) more than the write it saved.
 */
function writeByTurn(redis: Redis): void {
  const send = redis.sendCommand.bind(redis);
  let corked: Socket | null = null;
  const uncork = () => {
    corked?.uncork();
    corked = null;
  };
  redis.sendCommand = (command, stream) => {
    const socket = redis.stream as Socket | undefined;
    if (corked === null && socket && redis.status === "ready") {
      corked = socket;
      socket.cork();
      process.nextTick(uncork);
    }
    return send(command, stream);
  };
}
