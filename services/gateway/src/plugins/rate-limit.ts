import { hash } from "node:crypto";
import { AppError } from "@evalp/kit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { addressKey } from "../admission/client-address.js";
import { fixedWindows, type Window } from "../admission/fixed-window.js";
import { type AdmissionParts, type Admitted, createAdmission } from "../admission/round-trip.js";
import type { Claim } from "../idempotency/records.js";
import type { RateLimitName } from "../metrics.js";
import { presentedCredential } from "./auth.js";

const WINDOW_MS = 60_000;

declare module "fastify" {
  interface FastifyRequest {
    /** The window whose `RateLimit-*` headers the answer carries. */
    rateWindow?: { limit: number; window: Window };
    /** The address's window is left to be counted with the credential's (`provenAtOnce`). */
    addressUncounted?: true;
  }
}

/** What the limiter allows a minute. */
export type RateLimits = {
  /** A proven credential (docs/configuration.md: 600). */
  perCredential: number;
  /** Everything from one client address, proven or not. */
  perAddress: number;
  /** Requests from one address whose credential was refused; past it the address is not heard. */
  refusalsPerAddress: number;
};

/**
 * The edge limiter (docs/configuration.md), in front of everything else the gateway does, shared by every
 * replica through Redis:
 * - every request counts against its client address (`request.ip`: the peer, or the client
 *   named by `X-Forwarded-For` through the proxies TRUSTED_PROXIES names) — `perAddress`;
 * - a request whose credential is refused (401, or 403 before it was proven) counts against the
 *   address's refusals; once they reach `refusalsPerAddress` in a window, the address's
 *   requests are answered 429 before any credential is looked at, so a flood of made-up keys
 *   costs control nothing;
 * - a proven credential counts against itself — `perCredential` (an API key, a session, a
 *   participant or agent token: hashed, so no secret becomes a Redis key).
 * `RateLimit-Limit/Remaining/Reset` on every response: of the credential's window once proven,
 * else of the address's; 429 `rate_limited` with `Retry-After` past a limit. When Redis is
 * unreachable requests pass unlimited rather than fail (availability wins here, while
 * idempotency, which must not double-execute, fails closed with 503).
 */
export function registerRateLimit(
  app: FastifyInstance,
  redis: Redis,
  options: {
    limits: RateLimits;
    prefix: string;
    /** Told of each refusal, with the limit that refused. */
    refused?: (limit: RateLimitName) => void;
    /**
     * Whether the request's credential is already proven without asking anyone (a principal the
     * cache holds): its address is then counted together with its credential, in one round trip,
     * when the auth plugin calls `countCredential`, as nothing costly happens in between.
     */
    provenAtOnce?: (request: FastifyRequest) => boolean;
  },
): {
  countCredential(
    request: FastifyRequest,
    claim?: AdmissionParts["claim"],
  ): Promise<Claim | { kind: "unavailable"; cause: unknown } | undefined>;
} {
  const { limits, prefix } = options;
  const windows = fixedWindows(redis, WINDOW_MS);
  const admission = createAdmission(redis, WINDOW_MS, limits);
  // IPv6 clients by their /64 (addressKey): one host may send from any address of it.
  const addressParts = (request: FastifyRequest) => ({
    window: `${prefix}rl:ip:${addressKey(request.ip)}`,
    refusals: refusalKey(request),
  });
  const refusalKey = (request: FastifyRequest) => `${prefix}rl:refused:${addressKey(request.ip)}`;
  // Redis unreachable: nothing is counted, nothing is refused.
  const quietly = <T>(counting: Promise<T>) => counting.catch(() => null);

  const refuse = (limit: number, window: Window, which: RateLimitName): never => {
    options.refused?.(which);
    const retryAfter = Math.max(1, Math.ceil(window.resetMs / 1000));
    throw new AppError(
      "rate_limited",
      "Too many requests; slow down.",
      { limit, retry_after_seconds: retryAfter },
      { headers: { "Retry-After": String(retryAfter) } },
    );
  };

  /** Refuses past a limit what `admitted` counted, in the order the limits apply; else notes the window. */
  const enforce = (request: FastifyRequest, admitted: Admitted) => {
    const { address, refusals, credential } = admitted;
    if (address && refusals) {
      request.rateWindow = { limit: limits.perAddress, window: address };
      if (refusals.count >= limits.refusalsPerAddress) {
        request.rateWindow = { limit: limits.refusalsPerAddress, window: refusals };
        refuse(limits.refusalsPerAddress, refusals, "address_refusals");
      }
      if (address.count > limits.perAddress) refuse(limits.perAddress, address, "address");
    }
    if (credential) {
      request.rateWindow = { limit: limits.perCredential, window: credential };
      if (credential.count > limits.perCredential) refuse(limits.perCredential, credential, "credential");
    }
  };

  app.addHook("onRequest", async (request) => {
    if (options.provenAtOnce?.(request)) {
      request.addressUncounted = true;
      return;
    }
    const admitted = await quietly(admission.admit({ address: addressParts(request) }));
    if (admitted) enforce(request, admitted);
  });

  app.addHook("onSend", async (request, reply) => {
    const counted = request.rateWindow;
    if (!counted) return;
    const { limit, window } = counted;
    reply.header("RateLimit-Limit", String(limit));
    reply.header("RateLimit-Remaining", String(Math.max(0, limit - window.count)));
    reply.header("RateLimit-Reset", String(Math.max(1, Math.ceil(window.resetMs / 1000))));
  });

  // A credential that was presented and refused counts against the address that sent it.
  app.addHook("onResponse", async (request, reply) => {
    const refused = reply.statusCode === 401 || (reply.statusCode === 403 && !request.provenCredential);
    if (!refused || !presentedCredential(request)) return;
    await quietly(windows.hit(refusalKey(request)));
  });

  return {
    /**
     * Called once the request's credential is proven: it counts against that credential (and
     * against its address, when that was left to this call). `claim`, an Idempotency-Key to claim
     * in the same round trip, is claimed only if the request passed every limit; its outcome is
     * returned (undefined when not claimed; `unavailable` when Redis is unreachable, as
     * idempotency fails closed where the limits let requests pass).
     */
    async countCredential(request, claim) {
      const credential = request.provenCredential;
      const address = request.addressUncounted ? addressParts(request) : undefined;
      request.addressUncounted = undefined;
      const credentialKey = credential
        ? `${prefix}rl:cred:${hash("sha256", credential, "hex").slice(0, 32)}`
        : undefined;
      if (!credentialKey && !address && !claim) return undefined;
      let admitted: Admitted;
      try {
        admitted = await admission.admit({ address, credential: credentialKey, claim });
      } catch (error) {
        // Unlimited without Redis, but a key cannot be claimed: the idempotency plugin answers 503.
        return claim ? { kind: "unavailable", cause: error } : undefined;
      }
      enforce(request, admitted);
      return admitted.claim;
    },
  };
}
