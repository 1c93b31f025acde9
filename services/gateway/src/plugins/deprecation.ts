import type { Config } from "@evalp/kit";
import type { FastifyInstance } from "fastify";

/**
 * The headers every answer to a legacy key carries (docs/http.md#deprecation): `Deprecation` as
 * RFC 9745 writes it (`@` and the Unix time it took effect), a `Link` to what to do instead
 * (`rel="deprecation"`), and `Sunset` (RFC 8594, an HTTP date) once a date is set.
 */
export function legacyKeyHeaders(
  config: Pick<Config, "LEGACY_API_KEYS_DEPRECATED_AT" | "LEGACY_API_KEYS_SUNSET_AT" | "PUBLIC_URL">,
): Record<string, string> {
  const headers: Record<string, string> = {
    deprecation: `@${Math.floor(config.LEGACY_API_KEYS_DEPRECATED_AT.getTime() / 1000)}`,
    link: `<${new URL("/docs/guides/authentication.md#legacy-keys", config.PUBLIC_URL)}>; rel="deprecation"; type="text/markdown"`,
  };
  if (config.LEGACY_API_KEYS_SUNSET_AT) headers.sunset = config.LEGACY_API_KEYS_SUNSET_AT.toUTCString();
  return headers;
}

/** Legacy keys are for migration only: every answer to one says so, and until when. */
export function registerDeprecation(app: FastifyInstance, headers: Record<string, string>): void {
  app.addHook("onSend", async (request, reply) => {
    if (request.access?.principal.kind === "legacy") reply.headers(headers);
  });
}
