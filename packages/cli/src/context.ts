import type { EvalpClient } from "@evalp/client";
import { type ConfigFile, configPath, profileName, readConfigDocument } from "./config-file.js";
import { createOutput, type Output, type Streams } from "./output.js";
import {
  type Credential,
  requireCredential,
  resolveSettings,
  type ScopeOptions,
  type Settings,
} from "./settings.js";

/** What a run of the CLI is given from outside: environment, streams, stdin and the API's client. */
export type Runtime = {
  env: Record<string, string | undefined>;
  streams: Streams;
  /** All of stdin, for `--password-stdin`. */
  readStdin(): Promise<string>;
  /** Asks for a password on the terminal without echoing it; absent when there is no terminal. */
  promptPassword?: ((prompt: string) => Promise<string>) | undefined;
  /** The API's client for a base URL, as a credential (or as nobody, to log in). */
  connect(url: string, credential: Credential | undefined): EvalpClient;
};

/** The options every command accepts, wherever they are written on the line. */
export type GlobalOptions = ScopeOptions & { json?: boolean; profile?: string };

/** What an action works with: its settings, where it prints, and the API as the configured caller. */
export type Context = {
  runtime: Runtime;
  settings: Settings;
  output: Output;
  configPath: string;
  /** The config file's profile this run uses (`--profile`, EVALP_PROFILE, the file's default). */
  profile: string;
  /** That profile's settings ({} when it does not exist yet: `login` makes it). */
  config: ConfigFile;
  /** The API as the configured credential; without one the command fails before any request. */
  api(): EvalpClient;
};

/** Reads the config file's profile and resolves the settings of one run (see `resolveSettings`). */
export async function createContext(runtime: Runtime, options: GlobalOptions): Promise<Context> {
  const path = configPath(runtime.env);
  const document = await readConfigDocument(path);
  const profile = profileName(document, options.profile || runtime.env.EVALP_PROFILE);
  const config = document.profiles[profile] ?? {};
  const settings = resolveSettings(options, runtime.env, config);
  return {
    runtime,
    settings,
    output: createOutput(runtime.streams, options.json === true),
    configPath: path,
    profile,
    config,
    api: () => runtime.connect(settings.url, requireCredential(settings)),
  };
}
