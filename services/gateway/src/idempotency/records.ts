import { createHmac } from "node:crypto";
import { createSealer } from "@evalp/kit";
import { keyClaims } from "../admission/round-trip.js";
import type { RedisClient } from "../redis.js";

// An Idempotency-Key's answer in Redis (docs/idempotency.md): sealed, stored and its lock released.
// The admission step claims the key (admission/round-trip.ts, which also says whose key it is and
// where it lives); the idempotency check (admission/checks.ts) answers from the claim and finishes
// it here.

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

type RecordsRedis = RedisClient & {
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
  if (typeof client.idempotencyFinish !== "function")
    client.defineCommand("idempotencyFinish", { numberOfKeys: 2, lua: FINISH });
  const { claim } = keyClaims(redis);
  return {
    claim,
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

/**
 * Stored answers sealed with AES-256-GCM under a key derived (HKDF-SHA256) from the server's
 * secret (kit `createSealer`): an answer can hold a credential shown once (an API key's or a
 * webhook's secret, an access, participant or agent token), and a dump of Redis must reveal none.
 * A record sealed under another secret (rotated) does not open: it counts as absent.
 */
export type Seal = {
  seal(plain: string): string;
  open(sealed: string): string | null;
  /**
   * The key (base64url, 32 bytes) a plane seals its stored outcome of the key `id` with
   * (docs/idempotency.md): derived from the same secret and the key's identity, so only a
   * request under that key can have a plane's stored outcome opened, and a dump of a plane's
   * table reveals no answer.
   */
  planeKey(id: string): string;
};

/** The one key id of the records' sealer: the records live minutes, so none outlives a rotation. */
const KID = "jwt";

/**
 * HKDF-SHA256 (RFC 5869) of `secret` with the salt `evalp`, split in its two steps: the extract,
 * the same for every key, done once; the expand of one 32-byte key, a single HMAC
 * (`T(1) = HMAC(PRK, info ‖ 0x01)`), done per key. The keys are hkdfSync's byte for byte (a plane
 * opens what an earlier release sealed); hkdfSync did both steps, and set up a crypto job, for
 * every keyed write.
 */
export function hkdfKeys(secret: string): (info: string) => Buffer {
  const prk = createHmac("sha256", "evalp").update(secret).digest();
  const one = Buffer.of(1);
  return (info) => createHmac("sha256", prk).update(info).update(one).digest();
}

export function createSeal(secret: string): Seal {
  const sealer = createSealer("idempotency records", [{ kid: KID, secret }]);
  const derive = hkdfKeys(secret);
  return {
    planeKey: (id) => derive(`idempotency plane outcome ${id}`).toString("base64url"),
    seal: (plain) => sealer.seal(plain),
    open: (sealed) => sealer.open(sealed, KID),
  };
}
