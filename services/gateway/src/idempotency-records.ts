import type { Redis } from "ioredis";

/**
 * A key's record and its in-flight lock in one round trip, atomically: the stored record if there
 * is one; else the lock (`SET NX PX`) if no one holds it. Being one script, no request can store
 * its record or release its lock between this one's read and its lock attempt, which three
 * separate commands (read, lock, read again under the lock) had to allow for.
 */
const CLAIM = `
local stored = redis.call('GET', KEYS[1])
if stored then return {1, stored} end
if redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2], 'NX') then return {0} end
return {2}
`;

/**
 * The answer stored (when there is one to keep) and the lock released, in one command: a
 * `MULTI` … `EXEC` is four, and ioredis sends a transaction on a write of its own, where a
 * script joins the commands other requests issue in the same turn of the event loop.
 */
const FINISH = `
if ARGV[1] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
redis.call('DEL', KEYS[2])
return 1
`;

/** What a claim found: the record stored under the key, the lock taken, or the lock held by another. */
export type Claim = { kind: "stored"; sealed: string } | { kind: "claimed" } | { kind: "busy" };

type RecordsRedis = Redis & {
  idempotencyClaim(
    recordKey: string,
    lockKey: string,
    owner: string,
    ttlMs: number,
  ): Promise<[number, string?]>;
  idempotencyFinish(recordKey: string, lockKey: string, sealed: string, ttlSeconds: number): Promise<number>;
};

/** Claims idempotency keys and stores their answers on `redis` (one definition of each script per client). */
export function idempotencyRecords(redis: Redis) {
  const client = redis as RecordsRedis;
  if (typeof client.idempotencyClaim !== "function") {
    client.defineCommand("idempotencyClaim", { numberOfKeys: 2, lua: CLAIM });
    client.defineCommand("idempotencyFinish", { numberOfKeys: 2, lua: FINISH });
  }
  return {
    async claim(recordKey: string, lockKey: string, owner: string, ttlMs: number): Promise<Claim> {
      const [found, sealed] = await client.idempotencyClaim(recordKey, lockKey, owner, ttlMs);
      if (found === 1 && sealed !== undefined) return { kind: "stored", sealed };
      return found === 0 ? { kind: "claimed" } : { kind: "busy" };
    },
    /** Stores `sealed` for `ttlSeconds` (nothing when null) and releases the lock. */
    async finish(
      recordKey: string,
      lockKey: string,
      sealed: string | null,
      ttlSeconds: number,
    ): Promise<void> {
      await client.idempotencyFinish(recordKey, lockKey, sealed ?? "", ttlSeconds);
    },
  };
}
