import { createHash } from "node:crypto";
import { AppError } from "@evalp/kit";
import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Redis } from "ioredis";
import { presentedCredential } from "./auth.js";

/**
 * The bucket of a request: its credential (hashed, so no secret becomes a Redis key), or its
 * address when it presents none. Computed before authentication so that floods of unknown
 * credentials are limited before they cost an upstream call.
 */
function bucket(request: FastifyRequest): string {
  const credential = presentedCredential(request);
  if (!credential) return `ip:${request.ip}`;
  return `cred:${createHash("sha256").update(credential).digest("hex").slice(0, 32)}`;
}

/**
 * 600 requests a minute per credential (contract §8), counted in Redis so every gateway replica
 * shares one budget; `RateLimit-*` headers on every response, 429 `rate_limited` past it. When
 * Redis is unreachable requests pass unlimited rather than fail: availability wins here, while
 * idempotency (which must not double-execute) fails closed with 503.
 */
export async function registerRateLimit(
  app: FastifyInstance,
  redis: Redis,
  options: { perMinute: number; prefix: string },
): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: options.perMinute,
    timeWindow: 60_000,
    redis,
    nameSpace: `${options.prefix}rl:`,
    skipOnError: true,
    keyGenerator: bucket,
    enableDraftSpec: true,
    addHeadersOnExceeding: {
      "ratelimit-limit": true,
      "ratelimit-remaining": true,
      "ratelimit-reset": true,
    },
    addHeaders: {
      "ratelimit-limit": true,
      "ratelimit-remaining": true,
      "ratelimit-reset": true,
      "retry-after": true,
    },
    errorResponseBuilder: (_request, context) =>
      new AppError("rate_limited", "Too many requests; slow down.", {
        limit: context.max,
        retry_after_seconds: Math.ceil(context.ttl / 1000),
      }),
  });
}
