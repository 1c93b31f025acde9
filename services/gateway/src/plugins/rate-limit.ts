import { AppError } from "@evalp/kit";
import type { FastifyInstance } from "fastify";
import { presentedCredential } from "../admission/credentials.js";
import { fixedWindows } from "../admission/fixed-window.js";
import { addressWindows, WINDOW_MS } from "../admission/step.js";
import type { RateLimitName } from "../metrics.js";
import type { RedisClient } from "../redis.js";

/**
 * The edge limiter (docs/configuration.md), as the admission step counted it (admission/step.ts):
 * 429 `rate_limited` with `Retry-After` past a limit; `RateLimit-Limit/Remaining/Reset` on every
 * response, of the credential's window once proven, else of the address's. A request whose
 * credential is refused (401, or 403 before it was proven) counts against its address's refusals,
 * once answered.
 */
export function registerRateLimit(
  app: FastifyInstance,
  redis: RedisClient,
  options: {
    prefix: string;
    /** Told of each refusal, with the limit that refused. */
    refused?: (limit: RateLimitName) => void;
  },
): void {
  const windows = fixedWindows(redis, WINDOW_MS);

  app.addHook("onRequest", async (request) => {
    const over = request.admission?.over;
    if (!over) return;
    options.refused?.(over.name);
    const retryAfter = Math.max(1, Math.ceil(over.window.resetMs / 1000));
    throw new AppError(
      "rate_limited",
      "Too many requests; slow down.",
      { limit: over.limit, retry_after_seconds: retryAfter },
      { headers: { "Retry-After": String(retryAfter) } },
    );
  });

  app.addHook("onSend", async (request, reply) => {
    const shown = request.admission?.shown;
    if (!shown) return;
    const { limit, window } = shown;
    reply.header("RateLimit-Limit", String(limit));
    reply.header("RateLimit-Remaining", String(Math.max(0, limit - window.count)));
    reply.header("RateLimit-Reset", String(Math.max(1, Math.ceil(window.resetMs / 1000))));
  });

  // A credential that was presented and refused counts against the address that sent it;
  // Redis unreachable: nothing is counted.
  app.addHook("onResponse", async (request, reply) => {
    const kind = request.admission?.identity.kind;
    const proven = kind === "operator" || kind === "participant" || kind === "agent";
    const refused = reply.statusCode === 401 || (reply.statusCode === 403 && !proven);
    if (!refused || !presentedCredential(request)) return;
    await windows.hit(addressWindows(options.prefix, request).refusals).catch(() => null);
  });
}
