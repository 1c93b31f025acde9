import { createClient, type EvalpClient, type Fetch } from "@evalp/client";
import { CliError } from "./errors.js";
import type { Credential } from "./settings.js";

/**
 * The API's client as one credential, or as nobody (to log in). A request that reaches no server
 * fails as `unavailable` naming the address tried, the first thing to check when it happens.
 */
export function connectClient(
  url: string,
  credential: Credential | undefined,
  fetchImpl: Fetch = (request) => fetch(request),
): EvalpClient {
  return createClient({
    baseUrl: url,
    ...(credential?.kind === "api_key" && { apiKey: credential.value }),
    ...(credential?.kind === "token" && { accessToken: credential.value }),
    fetch: async (request) => {
      try {
        return await fetchImpl(request);
      } catch (error) {
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        const reason = cause?.code ?? cause?.message ?? (error as Error).message;
        throw new CliError("unavailable", `cannot reach ${url}: ${reason}`);
      }
    },
    headers: { "user-agent": "evalp-cli" },
  });
}
