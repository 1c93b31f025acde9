import { expect } from "vitest";
import type { ApiClient, ApiResponse, RequestOptions } from "../../api/support/client.js";
import { sentMail } from "../../api/support/mail.js";

/** Body fields that carry a secret, in requests and in responses. */
const SECRET_FIELDS = new Set([
  "password",
  "token",
  "access_token",
  "secret",
  "participant_token",
  "agent_token",
]);

/**
 * A value distinctive enough that finding it in a log line means it was logged: long, and not
 * a run of a few characters (a generated password such as `aaaaaaaa` could match by chance).
 */
function distinctive(value: string): boolean {
  return value.length >= 10 && new Set(value).size >= 6;
}

/** The credential in an Authorization, X-API-Key or Cookie header value. */
function credentialsIn(header: string): string[] {
  return header
    .split(/[;\s]+/)
    .map((part) => part.replace(/^evp_session=/, ""))
    .filter((part) => part.length > 0);
}

/**
 * Every secret a test file creates or sends (passwords, access tokens, API keys, webhook
 * signing secrets, participant and agent tokens, mailed tokens), so that the file can prove at
 * the end that no log line of the platform holds one (docs/configuration.md).
 */
export function createSecretHarvester() {
  const secrets = new Set<string>();

  function record(value: unknown): void {
    if (typeof value === "string" && distinctive(value)) secrets.add(value);
  }

  function harvest(value: unknown, depth = 0): void {
    if (depth > 20 || value === null || typeof value !== "object") return;
    for (const [key, inner] of Object.entries(value)) {
      if (SECRET_FIELDS.has(key)) record(inner);
      harvest(inner, depth + 1);
    }
  }

  /** The client, recording the secrets of every request it sends and every response it reads. */
  function wrap(api: ApiClient): ApiClient {
    async function call<T = any>(
      method: string,
      path: string,
      body?: unknown,
      options: RequestOptions = {},
    ): Promise<ApiResponse<T>> {
      for (const value of [options.token, options.apiKey, options.cookie]) record(value);
      for (const [name, value] of Object.entries(options.headers ?? {})) {
        if (["authorization", "x-api-key", "cookie"].includes(name.toLowerCase())) {
          for (const credential of credentialsIn(value)) record(credential);
        }
      }
      harvest(body);
      if (typeof options.raw === "string") {
        try {
          harvest(JSON.parse(options.raw));
        } catch {
          // Not JSON: nothing to harvest.
        }
      }
      const response = await api.call<T>(method, path, body, options);
      harvest(response.body);
      for (const cookie of response.headers.getSetCookie()) {
        record(/^evp_session=([^;]*)/.exec(cookie)?.[1]);
      }
      return response;
    }
    return {
      call,
      get: <T = any>(path: string, options?: RequestOptions) => call<T>("GET", path, undefined, options),
      post: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
        call<T>("POST", path, body, options),
      patch: <T = any>(path: string, body?: unknown, options?: RequestOptions) =>
        call<T>("PATCH", path, body, options),
    };
  }

  /** Records the token of every mail sent so far (invitations, password resets). */
  function harvestMail(mailDir: string): void {
    for (const mail of sentMail(mailDir)) {
      for (const match of mail.text.matchAll(/[?&]token=([0-9A-Za-z_-]+)/g)) record(match[1]);
    }
  }

  /** Asserts that no line holds any recorded secret, as written or JSON-escaped. */
  function expectAbsentFrom(lines: readonly string[]): void {
    const all = lines.join("\n");
    const leaked = [...secrets].filter(
      (secret) => all.includes(secret) || all.includes(JSON.stringify(secret).slice(1, -1)),
    );
    expect(leaked.map((secret) => `${secret.slice(0, 12)}…`)).toEqual([]);
  }

  return { secrets, record, wrap, harvestMail, expectAbsentFrom };
}

export type SecretHarvester = ReturnType<typeof createSecretHarvester>;
