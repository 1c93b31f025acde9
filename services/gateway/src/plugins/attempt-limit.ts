import { createHash } from "node:crypto";
import { AppError } from "@evalp/kit";
import type { FastifyInstance } from "fastify";
import { fixedWindows } from "../admission/round-trip.js";
import { addressKey } from "../admission/step.js";
import type { RateLimitName } from "../metrics.js";
import type { RedisClient } from "../redis.js";

/** Login and password reset: 5 attempts a minute per email and per IP (docs/authentication.md). */
export const ATTEMPTS_PER_MINUTE = 5;
/**
 * Anonymous requests that make the platform hash a password (sign-up, accepting an invitation,
 * confirming a reset: argon2id, 19 MiB and tens of milliseconds each): this many a minute per
 * client address, counted once they passed validation.
 */
export const PASSWORD_HASHES_PER_ADDRESS_PER_MINUTE = 20;
const WINDOW_SECONDS = 60;
/** Invitations are counted per organization in one-hour windows (docs/authentication.md). */
const INVITATION_WINDOW_SECONDS = 3600;

/** The brute-forceable actions, and the name their limit has in `evalp_rate_limit_refusals_total`. */
const LIMIT_OF = { login: "login", "password-reset": "password_reset" } as const satisfies Record<
  string,
  RateLimitName
>;
export type AttemptAction = keyof typeof LIMIT_OF;

/**
 * Counts attempts at a brute-forceable action in fixed one-minute windows in Redis, shared by
 * every gateway replica. Emails are hashed so no address becomes a Redis key.
 */
export type AttemptLimiter = {
  /** Counts one attempt for the email and the IP; 429 `rate_limited` past the limit of either. */
  check(action: AttemptAction, email: string, ip: string): Promise<void>;
  /** Counts one password hash asked for by the address; 429 past PASSWORD_HASHES_PER_ADDRESS_PER_MINUTE. */
  checkPasswordHash(ip: string): Promise<void>;
  /**
   * Counts one invitation mailed for the organization; 429 past `limit` an hour. Signing up is
   * open, so without it anyone could have the platform mail anyone, in a name of their choosing.
   */
  checkInvitation(organizationId: string, limit: number): Promise<void>;
};

/** `refused` is told of each refusal, with the limit that refused. */
export function createAttemptLimiter(
  redis: RedisClient,
  prefix: string,
  refused?: (limit: RateLimitName) => void,
): AttemptLimiter {
  const windows = fixedWindows(redis, WINDOW_SECONDS * 1000);
  const hourly = fixedWindows(redis, INVITATION_WINDOW_SECONDS * 1000);
  const count = async (
    keys: string[],
    limit: number,
    which: RateLimitName,
    within: ReturnType<typeof fixedWindows> = windows,
  ) => {
    const counted = await Promise.all(keys.map((key) => within.hit(key))).catch((error: unknown) => {
      throw new AppError("unavailable", undefined, {}, { cause: error });
    });
    for (const window of counted) {
      if (window.count > limit) {
        refused?.(which);
        const retryAfter = String(Math.max(1, Math.ceil(window.resetMs / 1000)));
        throw new AppError(
          "rate_limited",
          within === windows ? "Too many attempts; wait a minute." : "Too many invitations; wait an hour.",
          { limit, retry_after_seconds: Number(retryAfter) },
          { headers: { "Retry-After": retryAfter } },
        );
      }
    }
  };
  return {
    async check(action, email, ip) {
      const emailHash = createHash("sha256").update(email.trim().toLowerCase()).digest("hex").slice(0, 32);
      await count(
        [
          `${prefix}attempts:${action}:email:${emailHash}`,
          `${prefix}attempts:${action}:ip:${addressKey(ip)}`,
        ],
        ATTEMPTS_PER_MINUTE,
        LIMIT_OF[action],
      );
    },
    async checkPasswordHash(ip) {
      await count(
        [`${prefix}attempts:password-hash:ip:${addressKey(ip)}`],
        PASSWORD_HASHES_PER_ADDRESS_PER_MINUTE,
        "password_hash",
      );
    },
    async checkInvitation(organizationId, limit) {
      await count([`${prefix}attempts:invitation:org:${organizationId}`], limit, "invitations", hourly);
    },
  };
}

/** Counts the routes that declare `hashesPassword` against their client address, after validation. */
export function registerPasswordHashLimit(app: FastifyInstance, attempts: AttemptLimiter): void {
  app.addHook("preHandler", async (request) => {
    if (request.routeOptions.config.access?.hashesPassword) await attempts.checkPasswordHash(request.ip);
  });
}
