import type { RedisClient } from "../redis.js";

/**
 * A key's record and its in-flight lock, as a Lua function for scripts: the stored record if there
 * is one (1, the record); else the lock (`SET NX PX`) if no one holds it (0); else 2. Being one
 * script, no request can store its record or release its lock between this one's read and its
 * lock attempt, which three separate commands (read, lock, read again under the lock) had to
 * allow for. the admission's script (admission/round-trip.ts) claims with it too; `claimOf` reads its answer.
 */
export const CLAIM_FUNCTION = `
local function claim(recordKey, lockKey, owner, lockMs)
  local stored = redis.call('GET', recordKey)
  if stored then return 1, stored end
  if redis.call('SET', lockKey, owner, 'PX', lockMs, 'NX') then return 0 end
  return 2
end
`;

/** One claim: KEYS record and lock, ARGV the lock's owner and lifetime in ms. */
const CLAIM = `${CLAIM_FUNCTION}
local found, stored = claim(KEYS[1], KEYS[2], ARGV[1], ARGV[2])
return {found, stored}
`;

/**
 * The answer stored (when there is one to keep) and the lock released, in one command, by the
 * lock's owner only: a run whose lock expired (and which another run may hold now) neither
 * deletes that run's lock nor writes over its record; it returns 0. A `MULTI` … `EXEC` is four
 * commands, and ioredis sends a transaction on a write of its own, where a script joins the
 * commands other requests issue in the same turn of the event loop.
 * KEYS record and lock; ARGV the sealed answer ('' for none), its lifetime in s, the owner.
 */
const FINISH = `
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return 0 end
if ARGV[1] ~= '' then redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2]) end
redis.call('DEL', KEYS[2])
return 1
`;

/** What a claim found: the record stored under the key, the lock taken, or the lock held by another. */
export type Claim = { kind: "stored"; sealed: string } | { kind: "claimed" } | { kind: "busy" };

/** What CLAIM_FUNCTION answered, as a Claim; undefined when it did not run (a part not reached). */
export function claimOf(found: unknown, sealed: unknown): Claim | undefined {
  if (found === 1 && typeof sealed === "string") return { kind: "stored", sealed };
  if (found === 0) return { kind: "claimed" };
  if (found === 2) return { kind: "busy" };
  return undefined;
}

type RecordsRedis = RedisClient & {
  idempotencyClaim(
    recordKey: string,
    lockKey: string,
    owner: string,
    ttlMs: number,
  ): Promise<[number, string?]>;
  idempotencyFinish(
    recordKey: string,
    lockKey: string,
    sealed: string,
    ttlSeconds: number,
    owner: string,
  ): Promise<number>;
};

/** Claims idempotency keys and stores their answers on `redis` (one definition of each script per client). */
export function idempotencyRecords(redis: RedisClient) {
  const client = redis as RecordsRedis;
  if (typeof client.idempotencyClaim !== "function") {
    client.defineCommand("idempotencyClaim", { numberOfKeys: 2, lua: CLAIM });
    client.defineCommand("idempotencyFinish", { numberOfKeys: 2, lua: FINISH });
  }
  return {
    async claim(recordKey: string, lockKey: string, owner: string, ttlMs: number): Promise<Claim> {
      const [found, sealed] = await client.idempotencyClaim(recordKey, lockKey, owner, ttlMs);
      return claimOf(found, sealed) ?? { kind: "busy" };
    },
    /**
     * Stores `sealed` for `ttlSeconds` (nothing when null) and releases the lock, if `owner` still
     * holds it; resolves false (nothing done) when it no longer does.
     */
    async finish(
      recordKey: string,
      lockKey: string,
      owner: string,
      sealed: string | null,
      ttlSeconds: number,
    ): Promise<boolean> {
      return (await client.idempotencyFinish(recordKey, lockKey, sealed ?? "", ttlSeconds, owner)) === 1;
    },
  };
}
