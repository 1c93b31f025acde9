import { hash } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { Cluster } from "ioredis";
import type { RedisClient } from "../redis.js";
import type { Identity } from "./credentials.js";

// The admission's round trip to Redis (docs/architecture.md, step 2): the gateway's Redis key
// names, whose Idempotency-Key a request claims, the fixed-window counter, the one script that
// counts a request's windows and claims its key, and this gateway's share of the windows, which
// spares reads the round trip.

/**
 * The gateway's Redis keys, named in one place. Keys a script touches together carry the same hash
 * tag (the part in braces, which alone decides a key's slot on Redis Cluster), so that the script
 * runs on one node: an address's window and its refusals (`{ip:…}`), an Idempotency-Key's record
 * and its lock (`{idem:…}`). A credential's window has a tag of its own: on a Cluster the
 * admission script runs in parts (`createAdmission` below). The prefix (REDIS_KEY_PREFIX) must hold no
 * brace, or its braces would be the tag.
 */
export function redisKeys(prefix: string) {
  return {
    /** An address's rate-limit window (its /64 for IPv6, as `addressKey` in admission/step.ts keys it). */
    addressWindow: (address: string) => `${prefix}rl:ip:{ip:${address}}`,
    /** An address's refused credentials, counted in the same slot as its window. */
    addressRefusals: (address: string) => `${prefix}rl:refused:{ip:${address}}`,
    /** A proven credential's rate-limit window, by the credential's hash. */
    credentialWindow: (credentialHash: string) => `${prefix}rl:cred:{cred:${credentialHash}}`,
    /** An Idempotency-Key's stored answer. */
    idempotencyRecord: (id: string) => `${prefix}idem:rec:{idem:${id}}`,
    /** An Idempotency-Key's in-flight lock, in the same slot as its record. */
    idempotencyLock: (id: string) => `${prefix}idem:lock:{idem:${id}}`,
    /** A participant session's open sockets. */
    sessionSockets: (sessionId: string) => `${prefix}sockets:session:${sessionId}`,
    /** An address's open participant sockets. */
    addressSockets: (address: string) => `${prefix}sockets:address:${address}`,
  };
}

export type RedisKeys = ReturnType<typeof redisKeys>;

// Whose an Idempotency-Key is and where it lives (docs/idempotency.md).

const HEADER = "idempotency-key";
const MAX_KEY_LENGTH = 255;

/** The Redis identity of one key in its scope (docs/idempotency.md: caller, method, route). */
export function idempotencyId(scope: string, method: string, route: string, key: string): string {
  return hash("sha256", `${scope}\n${method}\n${route}\n${key}`, "hex");
}

/**
 * The scope of an operator's keys: the caller (an API key, or a signed-in user: the principal's
 * kind and id) in the organization it acts in. Another credential of the same organization that
 * sends the same key and body makes another request, and never sees this caller's answer (which
 * can hold a secret that only this caller may read).
 */
export function operatorScope(kind: string, principalId: string, organizationId: string | null): string {
  return `${kind}:${principalId}@${organizationId ?? ""}`;
}

/**
 * Whom a key belongs to: the participant session, the operator (`operatorScope`), an anonymous
 * caller by its address, so that one client's keys never meet another's.
 */
function keyScope(request: FastifyRequest, identity: Identity): string {
  if (identity.kind === "participant") return `participant:${identity.participant.sessionId}`;
  if (identity.kind === "operator" && identity.access) {
    const { principal, organizationId } = identity.access;
    return operatorScope(principal.kind, principal.principalId, organizationId);
  }
  return `anonymous:${request.ip}`;
}

/** Where a key lives in Redis: its id, its record and its in-flight lock. */
export type KeyTarget = { id: string; recordKey: string; lockKey: string };

/**
 * Where the Idempotency-Key of a request lives in Redis, if it carries one that its route
 * honours, for the caller `identity` names.
 */
export function keyTarget(
  request: FastifyRequest,
  keys: RedisKeys,
  identity: Identity,
): KeyTarget | undefined {
  const mode = request.routeOptions.config.access?.idempotency ?? "none";
  const key = request.headers[HEADER];
  if (mode === "none" || typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH)
    return undefined;
  const scope = keyScope(request, identity);
  const id = idempotencyId(scope, request.method, request.routeOptions.url ?? request.url, key);
  return { id, recordKey: keys.idempotencyRecord(id), lockKey: keys.idempotencyLock(id) };
}

/** One fixed window's count and how long the window has left (ms). */
export type Window = { count: number; resetMs: number };

/**
 * Counts `by` hits in a fixed window, as a Lua function for scripts: INCRBY, an expiry set by the
 * window's first hit, and what is left of it — with commands Redis 6 has (managed Redis 6 refused
 * `EXPIRE … NX`). Returns the first of the counts taken (the count of a single hit: the window's
 * count after it) and the window's remaining ms; a gateway takes several counts at once to spend
 * them itself (the leases, below). The admission's script (below) counts the rate limit's
 * windows with it too.
 */
const HIT_FUNCTION = `
local function hit(key, windowMs, by)
  local count = redis.call('INCRBY', key, by)
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then redis.call('PEXPIRE', key, windowMs); ttl = windowMs end
  return count - by + 1, ttl
end
`;

/** Hits in one window: KEYS[1] the window, ARGV[1] its length in ms, ARGV[2] how many. */
const HIT = `${HIT_FUNCTION}
local count, ttl = hit(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))
return {count, ttl}
`;

type WindowRedis = RedisClient & { fixedWindowHit(...args: Array<string | number>): Promise<number[]> };

/** Counts hits in fixed windows of `windowMs` on `redis` (one script definition per client). */
export function fixedWindows(redis: RedisClient, windowMs: number) {
  const client = redis as WindowRedis;
  if (typeof client.fixedWindowHit !== "function") client.defineCommand("fixedWindowHit", { lua: HIT });
  return {
    /** Counts a hit on `key` (`by` hits: the first of them): its window after the hit. */
    async hit(key: string, by = 1): Promise<Window> {
      const [count = 0, resetMs = windowMs] = await client.fixedWindowHit(1, key, windowMs, by);
      return { count, resetMs };
    },
  };
}

/**
 * A key's record and its in-flight lock, as a Lua function for scripts: the stored record if there
 * is one (1, the record); else the lock (`SET NX PX`) if no one holds it (0); else 2. Being one
 * script, no request can store its record or release its lock between this one's read and its
 * lock attempt, which three separate commands (read, lock, read again under the lock) had to
 * allow for. The admission's script (below) claims with it too; `claimOf` reads its answer.
 */
const CLAIM_FUNCTION = `
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

/** What a claim found: the record stored under the key, the lock taken, or the lock held by another. */
export type Claim = { kind: "stored"; sealed: string } | { kind: "claimed" } | { kind: "busy" };

/** What CLAIM_FUNCTION answered, as a Claim; undefined when it did not run (a part not reached). */
function claimOf(found: unknown, sealed: unknown): Claim | undefined {
  if (found === 1 && typeof sealed === "string") return { kind: "stored", sealed };
  if (found === 0) return { kind: "claimed" };
  if (found === 2) return { kind: "busy" };
  return undefined;
}

type ClaimRedis = RedisClient & {
  idempotencyClaim(
    recordKey: string,
    lockKey: string,
    owner: string,
    ttlMs: number,
  ): Promise<[number, string?]>;
};

/** Claims Idempotency-Keys one at a time on `redis` (one definition of the script per client). */
export function keyClaims(redis: RedisClient) {
  const client = redis as ClaimRedis;
  if (typeof client.idempotencyClaim !== "function")
    client.defineCommand("idempotencyClaim", { numberOfKeys: 2, lua: CLAIM });
  return {
    async claim(recordKey: string, lockKey: string, owner: string, ttlMs: number): Promise<Claim> {
      const [found, sealed] = await client.idempotencyClaim(recordKey, lockKey, owner, ttlMs);
      return claimOf(found, sealed) ?? { kind: "busy" };
    },
  };
}

/**
 * A request's admission in one script, so one round trip to Redis however many of its parts a
 * request needs: its hit in its address's window with a read of the address's refusals; once
 * those pass, its hit in its credential's window; once that passes too, the claim of its
 * Idempotency-Key (the stored record, else the in-flight lock, as `CLAIM_FUNCTION` claims
 * it). A part whose key is empty is skipped. A refused request counts no further and claims
 * nothing, so a 429 never holds a key's lock. Windows are fixed windows as `HIT_FUNCTION` counts
 * them (INCR, an expiry set by the window's first hit); a part not reached answers -1.
 *
 * On a Cluster the parts' keys lie in three slots (`redisKeys`' hash tags), which one script may not
 * touch: there each part is a script of its own (ADDRESS, `HIT`, the claim), one
 * round trip each to the node of its slot, sent only once the part before it passed.
 *
 * A window's part may take several counts at once (`counts`: the first is this request's), which
 * the gateway then spends itself (the leases, below).
 *
 * KEYS: address window, address refusals, credential window, record, lock.
 * ARGV: window ms, per address, refusals per address, per credential, lock owner, lock ms,
 * counts taken of the address's window, counts taken of the credential's.
 */
const ADDRESS_PART = `
local function address(windowKey, refusalsKey, windowMs, by)
  local count, ttl = hit(windowKey, windowMs, by)
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
  out[1], out[2], out[3], out[4] = address(KEYS[1], KEYS[2], windowMs, tonumber(ARGV[7]))
  if out[3] >= tonumber(ARGV[3]) or out[1] > tonumber(ARGV[2]) then return out end
end
if KEYS[3] ~= '' then
  out[5], out[6] = hit(KEYS[3], windowMs, tonumber(ARGV[8]))
  if out[5] > tonumber(ARGV[4]) then return out end
end
if KEYS[4] ~= '' then
  out[7], out[8] = claim(KEYS[4], KEYS[5], ARGV[5], ARGV[6])
end
return out
`;

/** The address part alone (a Cluster's): KEYS window and refusals, ARGV window ms and counts taken. */
const ADMIT_ADDRESS = `${HIT_FUNCTION}${ADDRESS_PART}
local count, ttl, refusals, refusalsTtl = address(KEYS[1], KEYS[2], tonumber(ARGV[1]), tonumber(ARGV[2]))
return {count, ttl, refusals, refusalsTtl}
`;

/** What a request's admission looks at; each part is optional. */
export type AdmissionParts = {
  /** The client address's window and its refusals' window. */
  address?: { window: string; refusals: string };
  /** The proven credential's window. */
  credential?: string;
  /** How many counts to take of the address's and the credential's window (1 each by default). */
  counts?: { address: number; credential: number };
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
  const claims = keyClaims(redis);
  const window = (count: unknown, resetMs: unknown): Window | undefined =>
    typeof count === "number" && count >= 0 ? { count, resetMs: Number(resetMs) } : undefined;

  /** One script for every part: the parts' keys may share a node (one server, a Sentinel set). */
  const together = async (parts: AdmissionParts): Promise<Admitted> => {
    const { address, credential, claim, counts } = parts;
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
        counts?.address ?? 1,
        counts?.credential ?? 1,
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
    const { address, credential, claim, counts } = parts;
    const admitted: Admitted = {};
    if (address) {
      const [count = 0, ms = windowMs, refusals = 0, refusalsMs = windowMs] =
        await client.gatewayAdmitAddress(address.window, address.refusals, windowMs, counts?.address ?? 1);
      admitted.address = { count, resetMs: ms };
      admitted.refusals = { count: refusals, resetMs: refusalsMs };
      if (refusals >= limits.refusalsPerAddress || count > limits.perAddress) return admitted;
    }
    if (credential) {
      admitted.credential = await windows.hit(credential, counts?.credential ?? 1);
      if (admitted.credential.count > limits.perCredential) return admitted;
    }
    if (claim) admitted.claim = await claims.claim(claim.recordKey, claim.lockKey, claim.owner, claim.ttlMs);
    return admitted;
  };

  const admit = redis instanceof Cluster ? inParts : together;
  return { admit };
}

/*
 * A gateway's share of the rate limit's windows (docs/http.md#rate-limiting). A request whose
 * windows this gateway holds counts of is counted here, with no round trip to Redis: when it holds
 * none, the admission takes `leaseSize(limit)` counts of the window at once (one INCRBY, the first
 * for the request that asked), and spends the rest on the requests that follow, until they run out
 * or the window ends. Every count is taken from Redis before it is spent, so no window ever admits
 * more than its limit, across any number of gateways; what leasing costs is the other way round: a
 * count taken and not spent by the window's end is lost, so a caller spread over G gateways may be
 * refused up to (G − 1) × leaseSize(limit) requests before its limit. Once a window's count is
 * past its limit it stays past it until the window ends, so a refused caller is refused here too.
 */

/** Counts taken of a window at once: a twentieth of its limit; one at a time below 40 (exact). */
export function leaseSize(limit: number): number {
  return Math.max(1, Math.floor(limit / 20));
}

/** Counts `next`…`to` of a window, this gateway's to spend until `endsAt` (ms since the epoch). */
type Lease = { next: number; to: number; endsAt: number; limit: number };

/** How many windows a gateway holds counts of at most: past it, requests count one by one. */
const MAX_LEASES = 100_000;

export type WindowLeases = {
  /** This request's count in `key`'s window, from a lease this gateway holds; else undefined. */
  take(key: string): Window | undefined;
  /** Whether `take(key)` would answer from a lease (it takes nothing). */
  holds(key: string): boolean;
  /** Keeps what Redis granted for `key`: `window` is the request's count, `size` counts were taken from it on. */
  keep(key: string, window: Window, size: number, limit: number): void;
};

export function windowLeases(now: () => number = Date.now): WindowLeases {
  const leases = new Map<string, Lease>();

  /** Forgets the leases of windows that ended (a Map keeps insertion order: the oldest first). */
  const sweep = (at: number) => {
    for (const [key, lease] of leases) {
      if (lease.endsAt > at && leases.size < MAX_LEASES) return;
      leases.delete(key);
    }
  };

  /** `key`'s lease while it has a count to spend (a window past its limit always has). */
  const live = (key: string, at: number): Lease | undefined => {
    const lease = leases.get(key);
    if (!lease) return undefined;
    // A window past its limit is refused until it ends, whoever spends the counts.
    const exhausted = lease.next > lease.limit;
    if (lease.endsAt > at && (lease.next <= lease.to || exhausted)) return lease;
    leases.delete(key);
    return undefined;
  };

  return {
    holds: (key) => live(key, now()) !== undefined,
    take(key) {
      const at = now();
      const lease = live(key, at);
      if (!lease) return undefined;
      const count = lease.next;
      lease.next += 1;
      return { count, resetMs: lease.endsAt - at };
    },
    keep(key, window, size, limit) {
      if (size <= 1 && window.count <= limit) return;
      const at = now();
      sweep(at);
      leases.delete(key);
      leases.set(key, {
        next: window.count + 1,
        to: window.count + size - 1,
        endsAt: at + window.resetMs,
        limit,
      });
    },
  };
}
