import { randomUUID } from "node:crypto";
import { AppError } from "@evalp/kit";
import { Cluster } from "ioredis";
import { redisKeys } from "../admission/round-trip.js";
import type { RateLimitName } from "../metrics.js";
import type { RedisClient } from "../redis.js";

/** How long a socket counts without its gateway renewing it: a gateway that died stops counting then. */
export const SLOT_LEASE_MS = 30_000;
/** How long a slot claimed before an upgrade waits for its socket (`take`) before it is freed. */
const UPGRADE_WAIT_MS = 10_000;
/** What an over-cap upgrade is told to wait: a slot frees when one of the other sockets closes. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Claims one slot in each of the sorted sets KEYS (the session's, then the address's), whose
 * members are sockets scored by their lease's end on Redis's clock (so gateways' clocks never
 * disagree): lapsed leases are dropped, then a set at its cap (ARGV[2 + i]) refuses (returns i)
 * and nothing is added, else the socket ARGV[1] is added to every set (returns 0). On a Cluster the
 * two sets lie in different slots: each is claimed by a call of its own (`claimKeys`).
 */
const CLAIM = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[2])
for i = 1, #KEYS do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now)
  if redis.call('ZCARD', KEYS[i]) >= tonumber(ARGV[2 + i]) then return i end
end
for i = 1, #KEYS do
  redis.call('ZADD', KEYS[i], now + lease, ARGV[1])
  redis.call('PEXPIRE', KEYS[i], lease)
end
return 0
`;

/**
 * Renews held slots: KEYS in pairs (a slot's session set, then its address set), ARGV[i] the
 * socket of pair i, the last ARGV the lease. XX: a slot released meanwhile is not put back.
 */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lease = tonumber(ARGV[#ARGV])
for i = 1, #KEYS do
  local member = ARGV[math.floor((i + 1) / 2)]
  redis.call('ZADD', KEYS[i], 'XX', now + lease, member)
  redis.call('PEXPIRE', KEYS[i], lease)
end
return 0
`;

/** The participant realtime door's refusals (docs/interview.md#participant-sessions). */
const PARTICIPANT_REFUSALS = {
  perSession: {
    reason: "sockets_per_session",
    message: "This participant session has as many realtime sockets open as it may.",
  },
  perAddress: {
    reason: "sockets_per_address",
    message: "This address has as many realtime sockets open as it may.",
  },
} as const;

type SlotRedis = RedisClient & {
  socketSlotClaim(...args: Array<string | number>): Promise<number>;
  socketSlotRenew(...args: Array<string | number>): Promise<number>;
};

/** One open socket's place in its session's and its address's counts. */
export type SocketSlot = { keys: [string, string]; member: string };

/**
 * Open participant sockets counted across every gateway (docs/interview.md#participant-sessions):
 * at most `perSession` per participant session and `perAddress` per client address. The counts
 * live in Redis, not in a gateway's memory, so two replicas share them; each gateway renews the
 * leases of the sockets it holds, so the slots of a gateway that died free themselves.
 */
export type SocketSlots = {
  /**
   * A slot for a socket about to be opened, or 429 `rate_limited` past a cap (503 when Redis is
   * down). Unless `take` takes it within UPGRADE_WAIT_MS (the upgrade failed), it is freed.
   */
  claim(sessionId: string, address: string): Promise<SocketSlot>;
  /** The opened socket takes its claimed slot: held (and renewed) until `release`. */
  take(slot: SocketSlot): void;
  /** Frees a slot (its socket closed). */
  release(slot: SocketSlot): Promise<void>;
  close(): void;
};

export function createSocketSlots(
  redis: RedisClient,
  options: {
    prefix: string;
    perSession: number;
    perAddress: number;
    refused?: (limit: RateLimitName) => void;
    onError?: (error: unknown) => void;
    /** SLOT_LEASE_MS unless given (tests); renewed every third of it. */
    leaseMs?: number;
    /** How a refusal names its cap and says it (default: the participant realtime door's words). */
    refusals?: Record<"perSession" | "perAddress", { reason: RateLimitName; message: string }>;
  },
): SocketSlots {
  const refusals = options.refusals ?? PARTICIPANT_REFUSALS;
  const leaseMs = options.leaseMs ?? SLOT_LEASE_MS;
  const client = redis as SlotRedis;
  if (typeof client.socketSlotClaim !== "function") {
    client.defineCommand("socketSlotClaim", { lua: CLAIM });
    client.defineCommand("socketSlotRenew", { lua: RENEW });
  }
  const split = redis instanceof Cluster;
  const keys = redisKeys(options.prefix);
  /**
   * Claims `slot` in its sets, as CLAIM answers: in one call, or on a Cluster one set after the
   * other, the session's taken back when the address's refuses.
   */
  const claimKeys = async (slot: SocketSlot): Promise<number> => {
    const { member } = slot;
    const [sessionKey, addressKey] = slot.keys;
    if (!split)
      return client.socketSlotClaim(
        2,
        sessionKey,
        addressKey,
        member,
        leaseMs,
        options.perSession,
        options.perAddress,
      );
    if ((await client.socketSlotClaim(1, sessionKey, member, leaseMs, options.perSession)) === 1) return 1;
    if ((await client.socketSlotClaim(1, addressKey, member, leaseMs, options.perAddress)) === 0) return 0;
    await redis.zrem(sessionKey, member);
    return 2;
  };
  const held = new Set<SocketSlot>();
  const waiting = new Map<SocketSlot, NodeJS.Timeout>();
  const renewal = setInterval(() => {
    const slots = [...held];
    if (slots.length === 0) return;
    // A missed renewal (Redis down) is caught up by the next one: leases outlast two misses.
    if (split) {
      // A Cluster: one call per set, each to its slot's node.
      for (const slot of slots)
        for (const key of slot.keys)
          client.socketSlotRenew(1, key, slot.member, leaseMs).catch(options.onError);
      return;
    }
    const keys = slots.flatMap((slot) => slot.keys);
    const members = slots.map((slot) => slot.member);
    client.socketSlotRenew(keys.length, ...keys, ...members, leaseMs).catch(options.onError);
  }, leaseMs / 3);
  renewal.unref();

  const release = async (slot: SocketSlot): Promise<void> => {
    clearTimeout(waiting.get(slot));
    waiting.delete(slot);
    if (!held.delete(slot)) return;
    const [sessionKey, addressKey] = slot.keys;
    // Not freed (Redis down): the lease lapses within SLOT_LEASE_MS, as for a gateway that died.
    await Promise.all([redis.zrem(sessionKey, slot.member), redis.zrem(addressKey, slot.member)]).then(
      () => undefined,
      options.onError,
    );
  };

  return {
    async claim(sessionId, address) {
      const slot: SocketSlot = {
        keys: [keys.sessionSockets(sessionId), keys.addressSockets(address)],
        member: randomUUID(),
      };
      const refusedBy = await claimKeys(slot).catch((error: unknown) => {
        throw new AppError("unavailable", undefined, {}, { cause: error });
      });
      if (refusedBy === 1 || refusedBy === 2) {
        const [limit, { reason, message }] =
          refusedBy === 1
            ? [options.perSession, refusals.perSession]
            : [options.perAddress, refusals.perAddress];
        options.refused?.(reason);
        throw new AppError(
          "rate_limited",
          message,
          { limit, reason, retry_after_seconds: RETRY_AFTER_SECONDS },
          { headers: { "Retry-After": String(RETRY_AFTER_SECONDS) } },
        );
      }
      held.add(slot);
      const abandoned = setTimeout(() => void release(slot), UPGRADE_WAIT_MS);
      abandoned.unref();
      waiting.set(slot, abandoned);
      return slot;
    },
    take(slot) {
      clearTimeout(waiting.get(slot));
      waiting.delete(slot);
    },
    release,
    close() {
      clearInterval(renewal);
      for (const timer of waiting.values()) clearTimeout(timer);
    },
  };
}
