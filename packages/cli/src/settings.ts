import type { ConfigFile } from "./config-file.js";
import { CliError, usageError } from "./errors.js";

/** The gateway's default address (docs/http.md). */
export const DEFAULT_URL = "http://127.0.0.1:8080";

/** How the CLI authenticates: an API key or a session's access token. */
export type Credential = { kind: "api_key" | "token"; value: string; source: string };

/** Where a run sends its requests, as whom, and the ids its paths default to. */
export type Settings = {
  url: string;
  credential: Credential | undefined;
  org: string | undefined;
  app: string | undefined;
  env: string | undefined;
};

/** The options every command takes (`--url`, `--org`, `--app`, `--env`). */
export type ScopeOptions = { url?: string; org?: string; app?: string; env?: string };

/**
 * Each setting from the first place that has it: the command line, then the environment
 * (`EVALP_*`), then the config file. A credential from the environment wins over the file's, so a
 * script can act as an API key while a person stays logged in.
 */
export function resolveSettings(
  options: ScopeOptions,
  env: Record<string, string | undefined>,
  file: ConfigFile,
): Settings {
  return {
    url: trimSlash(options.url || env.EVALP_URL || file.url || DEFAULT_URL),
    credential: credentialOf(env, file),
    org: options.org || env.EVALP_ORG || file.org,
    app: options.app || env.EVALP_APP || file.app,
    env: options.env || env.EVALP_ENV || file.env,
  };
}

function credentialOf(env: Record<string, string | undefined>, file: ConfigFile): Credential | undefined {
  if (env.EVALP_API_KEY) return { kind: "api_key", value: env.EVALP_API_KEY, source: "EVALP_API_KEY" };
  if (env.EVALP_TOKEN) return { kind: "token", value: env.EVALP_TOKEN, source: "EVALP_TOKEN" };
  if (file.api_key) return { kind: "api_key", value: file.api_key, source: "config file" };
  if (file.token) return { kind: "token", value: file.token, source: "config file" };
  return undefined;
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The credential a command needs, or the error that says how to get one. */
export function requireCredential(settings: Settings): Credential {
  if (settings.credential) return settings.credential;
  throw new CliError(
    "unauthenticated",
    "not logged in: run `evalp login`, or set EVALP_API_KEY or EVALP_TOKEN",
  );
}

const SCOPE_NAMES = {
  org: ["organization", "--org", "EVALP_ORG"],
  app: ["app", "--app", "EVALP_APP"],
  env: ["environment", "--env", "EVALP_ENV"],
} as const;

/** The ids a path needs, each required: a usage error names the flag and variable that give it. */
export function requireIds<K extends keyof typeof SCOPE_NAMES>(
  settings: Settings,
  ...keys: K[]
): Record<K, string> {
  const ids = {} as Record<K, string>;
  for (const key of keys) {
    const value = settings[key];
    if (!value) {
      const [noun, flag, variable] = SCOPE_NAMES[key];
      throw usageError(`no ${noun} id: pass ${flag} or set ${variable} (or "${key}" in the config file)`);
    }
    ids[key] = value;
  }
  return ids;
}
