import { hash, randomUUID } from "node:crypto";
import { isIP } from "node:net";
import type { FastifyInstance, FastifyRequest } from "fastify";
import ipaddr from "ipaddr.js";
import type { RateLimitName } from "../metrics.js";
import type { RedisClient } from "../redis.js";
import { type Identity, identityAsked, identityAtOnce, type Provers } from "./credentials.js";
import {
  type AdmissionParts,
  type Admitted,
  type Claim,
  createAdmission,
  type KeyTarget,
  keyTarget,
  leaseSize,
  type RedisKeys,
  redisKeys,
  type Window,
  type WindowLeases,
  windowLeases,
} from "./round-trip.js";

/** The rate limit's windows are a minute long (docs/configuration.md). */
export const WINDOW_MS = 60_000;

/** What the limiter allows a minute. */
export type RateLimits = {
  /** A proven credential (docs/configuration.md: 600). */
  perCredential: number;
  /** Everything from one client address, proven or not. */
  perAddress: number;
  /** Requests from one address whose credential was refused; past it the address is not heard. */
  refusalsPerAddress: number;
};

/** A limit and its window as counted for this request. */
export type Counted = { limit: number; window: Window };

/** A claim's outcome, or Redis unreachable when it was made. */
export type ClaimOutcome = Claim | { kind: "unavailable"; cause: unknown };

/**
 * What the admission step found of a request, before anything else looked at it: who its
 * credential is (`identity`), the rate limit's windows it was counted in, and its Idempotency-Key's
 * claim. The rate limit, auth and idempotency checks (admission/checks.ts) only read it.
 */
export type Admission = {
  identity: Identity;
  /** The window whose `RateLimit-*` headers the answer carries: the credential's once proven, else the address's. */
  shown?: Counted;
  /** The first limit the request is past, in the order they apply: it was counted no further and claimed nothing. */
  over?: Counted & { name: RateLimitName };
  /** The key claimed (record, else lock) with the windows; its lock's owner is a token of this claim's own. */
  claim?: KeyTarget & { owner: string; outcome: ClaimOutcome };
};

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the admission step (admission/step.ts), the first hook of every request. */
    admission: Admission | null;
  }
}

/**
 * The admission step, in front of everything else the gateway does (docs/architecture.md): one
 * `onRequest` hook that proves the request's credential, counts it in the rate limit's windows
 * (docs/configuration.md), shared by every replica through Redis, and claims its Idempotency-Key,
 * in one round trip to Redis (admission/round-trip.ts's script), or none for a request that claims
 * no key and whose windows this gateway holds counts of (admission/round-trip.ts):
 * - every request counts against its client address (`request.ip`: the peer, or the client named
 *   by `X-Forwarded-For` through the proxies TRUSTED_PROXIES names; IPv6 by its /64) —
 *   `perAddress`; once the address's refusals (credentials refused, counted by the rate limit
 *   check) reach `refusalsPerAddress` in a window, it is refused before its credential is looked at;
 * - a proven credential counts against itself — `perCredential` (an API key, a session, a
 *   participant or agent token: hashed, so no secret becomes a Redis key);
 * - a request that may do what it asks claims its Idempotency-Key, if its route honours one.
 * A credential is proven without asking anyone when it is a token (verified here) or a principal
 * the cache holds; else its address is counted first, and control is asked only if the address
 * passed (a flood of made-up keys costs control nothing): two round trips then. When Redis is
 * unreachable nothing is counted (availability wins here), and a claim is `unavailable`
 * (idempotency, which must not double-execute, fails closed with 503).
 */
export function registerAdmission(
  app: FastifyInstance,
  redis: RedisClient,
  options: { limits: RateLimits; prefix: string; lockMs: number; provers: Provers },
): void {
  const { limits, lockMs, provers } = options;
  // Named once: the admission names a request's keys on every request.
  const keys = redisKeys(options.prefix);
  const roundTrip = createAdmission(redis, WINDOW_MS, limits);
  const leased = leasedAdmission(roundTrip.admit, windowLeases(), limits);
  app.decorateRequest("admission", null);

  app.addHook("onRequest", async (request) => {
    const admission: Admission = { identity: { kind: "none" } };
    request.admission = admission;
    const address = addressWindows(keys, request);
    const atOnce = await identityAtOnce(request, provers);
    let addressCounted = false;
    let identity: Identity;
    if (atOnce.kind === "ask") {
      addressCounted = true;
      const counted = await roundTrip.admit({ address }).catch(() => undefined);
      if (counted) judge(admission, counted, limits);
      if (admission.over) return;
      identity = await identityAsked(request, atOnce.credential, provers);
    } else {
      identity = atOnce;
    }
    admission.identity = identity;
    const proven =
      identity.kind === "operator" || identity.kind === "participant" || identity.kind === "agent"
        ? identity.credential
        : undefined;
    const credential = proven && keys.credentialWindow(hash("sha256", proven, "hex").slice(0, 32));
    // Only a request that may do what it asks claims its key: whom the key belongs to is known then.
    const authorized = identity.kind !== "refused" && !(identity.kind === "operator" && identity.refusal);
    const target = authorized ? keyTarget(request, keys, identity) : undefined;
    if (addressCounted && !credential && !target) return;
    if (!addressCounted && !target) {
      // Nothing to claim: counted from this gateway's share of the windows where it holds one.
      const counted = await leased({ address, credential }).catch(() => undefined);
      if (counted) judge(admission, counted, limits);
      return;
    }
    const owner = randomUUID();
    let counted: Admitted;
    try {
      counted = await roundTrip.admit({
        address: addressCounted ? undefined : address,
        credential,
        claim: target && { ...target, owner, ttlMs: lockMs },
      });
    } catch (error) {
      // Unlimited without Redis, but a key cannot be claimed: the idempotency check answers 503.
      if (target) admission.claim = { ...target, owner, outcome: { kind: "unavailable", cause: error } };
      return;
    }
    judge(admission, counted, limits);
    if (target && counted.claim) admission.claim = { ...target, owner, outcome: counted.claim };
  });
}

/**
 * Counts a request that claims no key from the windows' leases this gateway holds, asking Redis
 * only for a window it holds none of, and then for `leaseSize` counts of it at once (the address's
 * refusals are read with them and held for as long as the address's lease). The address is
 * judged first: a request it refuses takes nothing of its credential's window, as in the script.
 */
function leasedAdmission(
  admit: (parts: AdmissionParts) => Promise<Admitted>,
  leases: WindowLeases,
  limits: RateLimits,
) {
  // An address's refusals as read with its window: their count, when their own window ends (what
  // a 429 for them says to wait), and until when they are held (the address's lease).
  const refusalsOf = new Map<string, { count: number; resetsAt: number; heldUntil: number }>();
  const counts = { address: leaseSize(limits.perAddress), credential: leaseSize(limits.perCredential) };
  const heldRefusals = (key: string): Window | undefined => {
    const held = refusalsOf.get(key);
    const at = Date.now();
    if (!held || held.heldUntil <= at) return undefined;
    return { count: held.count, resetMs: Math.max(0, held.resetsAt - at) };
  };
  const addressPasses = (counted: Admitted) =>
    counted.address !== undefined &&
    counted.refusals !== undefined &&
    counted.refusals.count < limits.refusalsPerAddress &&
    counted.address.count <= limits.perAddress;

  return async (parts: { address: { window: string; refusals: string }; credential?: string }) => {
    const { address, credential } = parts;
    const counted: Admitted = {};
    const refusals = heldRefusals(address.refusals);
    const addressHeld = refusals && leases.take(address.window);
    if (addressHeld) {
      counted.address = addressHeld;
      counted.refusals = refusals;
      if (!addressPasses(counted) || !credential) return counted;
      counted.credential = leases.take(credential);
      if (counted.credential) return counted;
      const asked = await admit({ credential, counts });
      if (asked.credential)
        leases.keep(credential, asked.credential, counts.credential, limits.perCredential);
      counted.credential = asked.credential;
      return counted;
    }
    // The address's window is asked for, with the credential's when this gateway holds none of it.
    const credentialHeld = credential !== undefined && leases.holds(credential);
    const asked = await admit({ address, credential: credentialHeld ? undefined : credential, counts });
    if (asked.address) leases.keep(address.window, asked.address, counts.address, limits.perAddress);
    // Bounded as the leases are: past it, the addresses' refusals are read again.
    if (refusalsOf.size >= 100_000) refusalsOf.clear();
    if (asked.refusals && asked.address) {
      const at = Date.now();
      refusalsOf.set(address.refusals, {
        count: asked.refusals.count,
        resetsAt: at + asked.refusals.resetMs,
        heldUntil: at + asked.address.resetMs,
      });
    }
    if (asked.credential && credential)
      leases.keep(credential, asked.credential, counts.credential, limits.perCredential);
    counted.address = asked.address;
    counted.refusals = asked.refusals;
    if (!credential || !addressPasses(counted)) return counted;
    counted.credential = asked.credential ?? leases.take(credential);
    return counted;
  };
}

/** The client address's window and its refusals' window (IPv6 clients by their /64: one host may send from any address of it). */
export function addressWindows(keys: RedisKeys, request: FastifyRequest) {
  const address = addressKey(request.ip);
  return { window: keys.addressWindow(address), refusals: keys.addressRefusals(address) };
}

/** Notes what `counted` found on `admission`: the window to show, and the first limit it is past. */
export function judge(admission: Admission, counted: Admitted, limits: RateLimits): void {
  const { address, refusals, credential } = counted;
  const over = (limit: number, window: Window, name: RateLimitName) => {
    admission.shown = { limit, window };
    admission.over ??= { limit, window, name };
  };
  if (address && refusals) {
    admission.shown = { limit: limits.perAddress, window: address };
    if (refusals.count >= limits.refusalsPerAddress)
      over(limits.refusalsPerAddress, refusals, "address_refusals");
    else if (address.count > limits.perAddress) over(limits.perAddress, address, "address");
  }
  if (credential && !admission.over) {
    admission.shown = { limit: limits.perCredential, window: credential };
    if (credential.count > limits.perCredential) over(limits.perCredential, credential, "credential");
  }
}

/**
 * What the per-address limits count a client under (docs/limits.md): an IPv4 address as it is;
 * an IPv6 address by its /64, since a host is handed a whole /64 and may send from any address in
 * it, so that counting each address would let one client rotate around every limit; an
 * IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, a dual-stack socket's view of an IPv4 client) as
 * the IPv4 address inside.
 */
export function addressKey(address: string): string {
  // A zone (`fe80::1%eth0`) names the link the address is on, not another client.
  const bare = address.split("%")[0] ?? address;
  if (isIP(bare) !== 6) return address;
  // The URL standard's serialization first (hex groups only): ipaddr.js reads any dotted tail as
  // IPv4-mapped (`::1.2.3.4` as `::ffff:1.2.3.4`).
  const parsed = ipaddr.IPv6.parse(new URL(`http://[${bare}]/`).hostname.slice(1, -1));
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`).toString()}/64`;
}
