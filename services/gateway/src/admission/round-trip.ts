import { Cluster } from "ioredis";
import { CLAIM_FUNCTION, type Claim, claimOf, idempotencyRecords } from "../idempotency/records.js";
import type { RedisClient } from "../redis.js";
import { fixedWindows, HIT_FUNCTION, type Window } from "./fixed-window.js";

/**
 * A request's admission in one script, so one round trip to Redis however many of its parts a
 * request needs: its hit in its address's window with a read of the address's refusals; once
 * those pass, its hit in its credential's window; once that passes too, the claim of its
 * Idempotency-Key (the stored record, else the in-flight lock, as idempotency/records.ts's
 * claim). A part whose key is empty is skipped. A refused request counts no further and claims
 * nothing, so a 429 never holds a key's lock. Windows are fixed windows as fixed-window.ts counts
 * them (INCR, an expiry set by the window's first hit); a part not reached answers -1.
 *
 * On a Cluster the parts' keys lie in three slots (../redis-keys.ts), which one script may not
 * touch: there each part is a script of its own (ADDRESS, fixed-window.ts's hit, the claim), one
 * round trip each to the node of its slot, sent only once the part before it passed.
 *
 * KEYS: address window, address refusals, credential window, record, lock.
 * ARGV: window ms, per address, refusals per address, per credential, lock owner, lock ms.
 */
const ADDRESS_PART = `
local function address(windowKey, refusalsKey, windowMs)
  local count, ttl = hit(windowKey, windowMs)
  local refusals = tonumber(redis.call('GET', refusalsKey) or '0')
  local refusalsTtl = redis.call('PTTL', refusalsKey)
  if refusalsTtl < 0 then refusalsTtl = windowMs end
  return count, ttl, refusals, refusalsTtl
end
`;

const ADMIT = `${HIT_FUNCTION}${CLAIM_FUNCTION}${ADDRESS_PART}
local windowMs = tonumber(ARGV[1])
local out = {-1, -1, -1, -1, -1, -1, -1}
if KEYS[1] ~= '' then
  out[1], out[2], out[3], out[4] = address(KEYS[1], KEYS[2], windowMs)
  if out[3] >= tonumber(ARGV[3]) or out[1] > tonumber(ARGV[2]) then return out end
end
if KEYS[3] ~= '' then
  out[5], out[6] = hit(KEYS[3], windowMs)
  if out[5] > tonumber(ARGV[4]) then return out end
end
if KEYS[4] ~= '' then
  out[7], out[8] = claim(KEYS[4], KEYS[5], ARGV[5], ARGV[6])
end
return out
`;

/** The address part alone (a Cluster's): KEYS window and refusals, ARGV[1] window ms. */
const ADMIT_ADDRESS = `${HIT_FUNCTION}${ADDRESS_PART}
local count, ttl, refusals, refusalsTtl = address(KEYS[1], KEYS[2], tonumber(ARGV[1]))
return {count, ttl, refusals, refusalsTtl}
`;

/** What a request's admission looks at; each part is optional. */
export type AdmissionParts = {
  /** The client address's window and its refusals' window. */
  address?: { window: string; refusals: string };
  /** The proven credential's window. */
  credential?: string;
  /** The Idempotency-Key to claim: its record and lock, and the lock's owner and lifetime. */
  claim?: { recordKey: string; lockKey: string; owner: string; ttlMs: number };
};

/** What the admission found: the windows counted or read, and the claim, for the parts it reached. */
export type Admitted = {
  address?: Window;
  refusals?: Window;
  credential?: Window;
  claim?: Claim;
};

/** The limits a part must pass for the next one to be counted or claimed. */
export type AdmissionLimits = { perAddress: number; refusalsPerAddress: number; perCredential: number };

type AdmissionRedis = RedisClient & {
  gatewayAdmit(...args: Array<string | number>): Promise<Array<number | string>>;
  gatewayAdmitAddress(...args: Array<string | number>): Promise<number[]>;
};

/** Admits requests on `redis` in windows of `windowMs` (one script definition per client). */
export function createAdmission(redis: RedisClient, windowMs: number, limits: AdmissionLimits) {
  const client = redis as AdmissionRedis;
  if (typeof client.gatewayAdmit !== "function") {
    client.defineCommand("gatewayAdmit", { numberOfKeys: 5, lua: ADMIT });
    client.defineCommand("gatewayAdmitAddress", { numberOfKeys: 2, lua: ADMIT_ADDRESS });
  }
  const windows = fixedWindows(redis, windowMs);
  const records = idempotencyRecords(redis);
  const window = (count: unknown, resetMs: unknown): Window | undefined =>
    typeof count === "number" && count >= 0 ? { count, resetMs: Number(resetMs) } : undefined;

  /** One script for every part: the parts' keys may share a node (one server, a Sentinel set). */
  const together = async (parts: AdmissionParts): Promise<Admitted> => {
    const { address, credential, claim } = parts;
    const [addressCount, addressMs, refusals, refusalsMs, credentialCount, credentialMs, claimed, sealed] =
      await client.gatewayAdmit(
        address?.window ?? "",
        address?.refusals ?? "",
        credential ?? "",
        claim?.recordKey ?? "",
        claim?.lockKey ?? "",
        windowMs,
        limits.perAddress,
        limits.refusalsPerAddress,
        limits.perCredential,
        claim?.owner ?? "",
        claim?.ttlMs ?? 0,
      );
    const admitted: Admitted = {
      address: window(addressCount, addressMs),
      refusals: window(refusals, refusalsMs),
      credential: window(credentialCount, credentialMs),
    };
    const found = claimOf(claimed, sealed);
    if (found) admitted.claim = found;
    return admitted;
  };

  /** A script per part, each on its slot's node, in order, each only if the one before passed. */
  const inParts = async (parts: AdmissionParts): Promise<Admitted> => {
    const { address, credential, claim } = parts;
    const admitted: Admitted = {};
    if (address) {
      const [count = 0, ms = windowMs, refusals = 0, refusalsMs = windowMs] =
        await client.gatewayAdmitAddress(address.window, address.refusals, windowMs);
      admitted.address = { count, resetMs: ms };
      admitted.refusals = { count: refusals, resetMs: refusalsMs };
      if (refusals >= limits.refusalsPerAddress || count > limits.perAddress) return admitted;
    }
    if (credential) {
      admitted.credential = await windows.hit(credential);
      if (admitted.credential.count > limits.perCredential) return admitted;
    }
    if (claim) admitted.claim = await records.claim(claim.recordKey, claim.lockKey, claim.owner, claim.ttlMs);
    return admitted;
  };

  const admit = redis instanceof Cluster ? inParts : together;
  return { admit };
}
