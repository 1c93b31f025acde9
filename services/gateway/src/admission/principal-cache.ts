import { hash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Logger } from "pino";
import type { Principal } from "../http/principal.js";
import { type RedisClient, subscriberOf } from "../redis.js";

/** At most this many credentials are remembered per gateway; the least recently used go first. */
const MAX_ENTRIES = 10_000;

/**
 * What a credential change touched, as every gateway must forget it: the principals resolved
 * from one credential (a logout, a session's active organization), every principal of a user (a
 * new organization), the principal of one key (a revocation), or, where the gateway cannot tell
 * whom a change touched (a password reset, an accepted invitation), all of them.
 */
export type PrincipalChange =
  | { credential: string }
  | { userId: string }
  | { principalId: string }
  | { all: true };

/** How a change travels between gateways: never the credential itself, only its SHA-256. */
type ChangeMessage = { credential_sha256?: string; user_id?: string; principal_id?: string };

const sha256 = (text: string) => hash("sha256", text, "base64url");

/**
 * Resolved principals by credential, so that a request does not ask control who its caller is
 * every time (that question was half the cost of a simple read).
 *
 * A cached principal must never outlive a change to its credential: a revoked key answers 401
 * on the very next request. Three rules keep it so:
 * - every gateway forgets what a change touched when any gateway relays that change (`forget`,
 *   called before the change's answer is sent, whatever that answer is: a change that timed out
 *   may still have been made; other gateways hear it on a Redis channel);
 * - a principal resolved while a change that touches it was being forgotten is not stored, so a
 *   lookup that raced with a revocation cannot put the old answer back (changes to others do
 *   not keep it out);
 * - while the channel is not subscribed (Redis down, reconnecting), nothing is cached: a missed
 *   message could otherwise leave a stale entry behind.
 * Entries also expire after `ttlMs` and at the session's own expiry, whichever comes first: that
 * bounds what no gateway could relay (a change made in the database directly, or a gateway that
 * died between the change and its message).
 */
export type PrincipalCache = {
  /** The principal of a credential, from the cache or from `resolve` (whose errors pass through). */
  lookup(credential: string, resolve: () => Promise<Principal>): Promise<Principal>;
  /** The principal of a credential if the cache holds it (what `lookup` would answer at once), else undefined. */
  peek(credential: string): Principal | undefined;
  /** Forgets what a change touched, here and (over the channel) on every other gateway. */
  forget(change: PrincipalChange): Promise<void>;
  close(): Promise<void>;
};

export function createPrincipalCache(options: {
  redis: RedisClient;
  channel: string;
  ttlMs: number;
  logger: Logger;
}): PrincipalCache {
  const { redis, channel, ttlMs, logger } = options;
  // Keyed by the credential's SHA-256, so that a change can name a credential without sending it.
  const entries = new LRUCache<string, { principal: Principal; until: number }>({ max: MAX_ENTRIES });
  let listening = false;
  // Lookups waiting for control, each with the changes heard meanwhile: its answer is not stored
  // if one of them touched it (it may predate the change).
  const pending = new Set<ChangeMessage[]>();
  const drop = (message: ChangeMessage) => {
    for (const heard of pending) heard.push(message);
    if (message.credential_sha256) entries.delete(message.credential_sha256);
    else if (message.user_id || message.principal_id) {
      // A scan of at most MAX_ENTRIES, on a change of credentials (rare next to lookups).
      const touched: string[] = [];
      for (const [key, { principal }] of entries.entries()) {
        if (touches(message, key, principal)) touched.push(key);
      }
      for (const key of touched) entries.delete(key);
    } else entries.clear();
  };
  const dropAll = () => drop({});

  // No command timeout on the channel's connection: a SUBSCRIBE answered late (a busy Redis or
  // gateway at start-up) must still turn the cache on, where a timed-out one left it off for good
  // although Redis had subscribed. A connection that fails closes, and its next `ready` subscribes
  // again.
  const subscriber = ttlMs > 0 ? subscriberOf(redis) : null;
  if (subscriber) {
    subscriber.on("error", () => {});
    subscriber.on("message", (from: string, text: string) => {
      if (from === channel) drop(parseChange(text));
    });
    // Whatever was published while the channel was down is lost: forget everything on the way
    // down and cache again only once subscribed anew.
    subscriber.on("close", () => {
      if (listening) logger.warn("principal cache off: invalidation channel lost");
      listening = false;
      dropAll();
    });
    subscriber.on("ready", () => {
      subscriber.subscribe(channel).then(
        () => {
          dropAll();
          listening = true;
        },
        (error: unknown) => logger.warn({ err: error }, "principal cache: subscribe failed"),
      );
    });
    subscriber.connect().catch(() => {});
  }

  return {
    peek(credential) {
      const hit = listening ? entries.get(sha256(credential)) : undefined;
      return hit && hit.until > Date.now() ? hit.principal : undefined;
    },
    async lookup(credential, resolve) {
      const now = Date.now();
      const key = sha256(credential);
      const hit = listening ? entries.get(key) : undefined;
      if (hit && hit.until > now) return hit.principal;
      const heard: ChangeMessage[] = [];
      pending.add(heard);
      let principal: Principal;
      try {
        principal = await resolve();
      } finally {
        pending.delete(heard);
      }
      const until = Math.min(now + ttlMs, principal.expiresAt?.getTime() ?? Number.POSITIVE_INFINITY);
      const unchanged = !heard.some((change) => touches(change, key, principal));
      if (listening && unchanged && until > Date.now()) {
        entries.set(key, { principal, until });
      }
      return principal;
    },
    async forget(change) {
      const message: ChangeMessage =
        "credential" in change
          ? { credential_sha256: sha256(change.credential) }
          : "userId" in change
            ? { user_id: change.userId }
            : "principalId" in change
              ? { principal_id: change.principalId }
              : {};
      drop(message);
      if (!subscriber) return;
      // Redis down means every gateway's channel is down too, so none of them is caching.
      await redis.publish(channel, JSON.stringify(message)).catch((error: unknown) => {
        logger.warn({ err: error }, "principal cache: could not publish a credential change");
      });
    },
    async close() {
      listening = false;
      dropAll();
      subscriber?.disconnect();
    },
  };
}

/** Whether `change` touches the principal cached under `key` (a credential's SHA-256). */
function touches(change: ChangeMessage, key: string, principal: Principal): boolean {
  if (change.credential_sha256) return change.credential_sha256 === key;
  if (change.user_id) return principal.userId === change.user_id;
  if (change.principal_id) return principal.principalId === change.principal_id;
  return true;
}

/**
 * A change as another gateway published it. The channel is trusted no further than it must be:
 * anything but a well-formed message naming one thing forgets everything (the safe reading).
 */
function parseChange(text: string): ChangeMessage {
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== "object" || value === null || Array.isArray(value)) return {};
    const fields = Object.entries(value);
    if (fields.length !== 1) return {};
    const [name, id] = fields[0] as [string, unknown];
    if (typeof id !== "string" || id.length === 0 || id.length > 200) return {};
    if (name === "credential_sha256" || name === "user_id" || name === "principal_id") return { [name]: id };
    return {};
  } catch {
    return {};
  }
}
