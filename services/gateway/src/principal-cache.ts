import type { Redis } from "ioredis";
import { LRUCache } from "lru-cache";
import type { Logger } from "pino";
import type { Principal } from "./http/principal.js";

/** At most this many credentials are remembered per gateway; the least recently used go first. */
const MAX_ENTRIES = 10_000;

/**
 * Resolved principals by credential, so that a request does not ask control who its caller is
 * every time (that question was half the cost of a simple read).
 *
 * A cached principal must never outlive a change to its credential: a revoked key answers 401
 * on the very next request. Three rules keep it so:
 * - every gateway forgets every principal when any gateway relays a change of credentials
 *   (`invalidate`, called before that change's answer is sent; other gateways hear it on a
 *   Redis channel);
 * - a principal resolved while an invalidation happened is not stored (a generation counter), so
 *   a lookup that raced with a revocation cannot put the old answer back;
 * - while the channel is not subscribed (Redis down, reconnecting), nothing is cached: a missed
 *   message could otherwise leave a stale entry behind.
 * Entries also expire after `ttlMs` and at the session's own expiry, whichever comes first.
 */
export type PrincipalCache = {
  /** The principal of a credential, from the cache or from `resolve` (whose errors pass through). */
  lookup(credential: string, resolve: () => Promise<Principal>): Promise<Principal>;
  /** Forgets every principal here and tells every other gateway to do the same. */
  invalidate(): Promise<void>;
  close(): Promise<void>;
};

export function createPrincipalCache(options: {
  redis: Redis;
  channel: string;
  ttlMs: number;
  logger: Logger;
}): PrincipalCache {
  const { redis, channel, ttlMs, logger } = options;
  const entries = new LRUCache<string, { principal: Principal; until: number }>({ max: MAX_ENTRIES });
  let generation = 0;
  let listening = false;
  const forget = () => {
    generation += 1;
    entries.clear();
  };

  const subscriber = ttlMs > 0 ? redis.duplicate({ lazyConnect: true }) : null;
  if (subscriber) {
    subscriber.on("error", () => {});
    subscriber.on("message", (from: string) => {
      if (from === channel) forget();
    });
    // Whatever was published while the channel was down is lost: forget everything on the way
    // down and cache again only once subscribed anew.
    subscriber.on("close", () => {
      if (listening) logger.warn("principal cache off: invalidation channel lost");
      listening = false;
      forget();
    });
    subscriber.on("ready", () => {
      subscriber.subscribe(channel).then(
        () => {
          forget();
          listening = true;
        },
        (error: unknown) => logger.warn({ err: error }, "principal cache: subscribe failed"),
      );
    });
    subscriber.connect().catch(() => {});
  }

  return {
    async lookup(credential, resolve) {
      const now = Date.now();
      const hit = listening ? entries.get(credential) : undefined;
      if (hit && hit.until > now) return hit.principal;
      const startedIn = generation;
      const principal = await resolve();
      const until = Math.min(now + ttlMs, principal.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY);
      if (listening && startedIn === generation && until > Date.now()) {
        entries.set(credential, { principal, until });
      }
      return principal;
    },
    async invalidate() {
      forget();
      if (!subscriber) return;
      // Redis down means every gateway's channel is down too, so none of them is caching.
      await redis.publish(channel, "").catch((error: unknown) => {
        logger.warn({ err: error }, "principal cache: could not publish an invalidation");
      });
    },
    async close() {
      listening = false;
      forget();
      subscriber?.disconnect();
    },
  };
}
