import type { Redis } from "ioredis";
import { CLAIM_FUNCTION, type Claim, claimOf } from "../idempotency/records.js";
import { HIT_FUNCTION, type Window } from "./fixed-window.js";

/**
 * A request's admission in one script, so one round trip to Redis however many of its parts a
 * request needs: its hit in its address's window with a read of the address's refusals; once
 * those pass, its hit in its credential's window; once that passes too, the claim of its
 * Idempotency-Key (the stored record, else the in-flight lock, as idempotency/records.ts's
 * claim). A part whose key is empty is skipped. A refused request counts no further and claims
 * nothing, so a 429 never holds a key's lock. Windows are fixed windows as fixed-window.ts counts
 * them (INCR, an expiry set by the window's first hit); a part not reached answers -1.
 *
 * KEYS: address window, address refusals, credential window, record, lock.
 * ARGV: window ms, per address, refusals per address, per credential, lock owner, lock ms.
 */
const ADMIT = `${HIT_FUNCTION}${CLAIM_FUNCTION}
local windowMs = tonumber(ARGV[1])
local out = {-1, -1, -1, -1, -1, -1, -1}
if KEYS[1] ~= '' then
  out[1], out[2] = hit(KEYS[1], windowMs)
  out[3] = tonumber(redis.call('GET', KEYS[2]) or '0')
  out[4] = redis.call('PTTL', KEYS[2])
  if out[4] < 0 then out[4] = windowMs end
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

type AdmissionRedis = Redis & {
  gatewayAdmit(...args: Array<string | number>): Promise<Array<number | string>>;
};

/** Admits requests on `redis` in windows of `windowMs` (one script definition per client). */
export function createAdmission(redis: Redis, windowMs: number, limits: AdmissionLimits) {
  const client = redis as AdmissionRedis;
  if (typeof client.gatewayAdmit !== "function")
    client.defineCommand("gatewayAdmit", { numberOfKeys: 5, lua: ADMIT });
  const window = (count: unknown, resetMs: unknown): Window | undefined =>
    typeof count === "number" && count >= 0 ? { count, resetMs: Number(resetMs) } : undefined;
  return {
    async admit(parts: AdmissionParts): Promise<Admitted> {
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
    },
  };
}
