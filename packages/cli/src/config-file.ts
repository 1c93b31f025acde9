import { chmod, mkdir, open, readFile, rename, stat, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { CliError } from "./errors.js";

/** What the CLI keeps between runs: where the API is, a credential, and default ids. */
export type ConfigFile = {
  url?: string;
  /** An access token from `evalp login`. */
  token?: string;
  /** The token's expiry, to say so instead of letting the API answer 401. */
  token_expires_at?: string;
  api_key?: string;
  org?: string;
  app?: string;
  env?: string;
};

const FIELDS = ["url", "token", "token_expires_at", "api_key", "org", "app", "env"] as const;

/** `$EVALP_CONFIG`, else `$XDG_CONFIG_HOME/evalp/config.json`, else `~/.config/evalp/config.json`. */
export function configPath(env: Record<string, string | undefined>, home: string = homedir()): string {
  if (env.EVALP_CONFIG) return env.EVALP_CONFIG;
  return join(env.XDG_CONFIG_HOME || join(home, ".config"), "evalp", "config.json");
}

/** The profile used when none is asked for and the file names no default. */
export const DEFAULT_PROFILE = "default";

/**
 * The whole file: named profiles, each a `ConfigFile`, and the one used by default. A file of the
 * older flat form (a `ConfigFile` at the top) is read as the one profile `default`.
 */
export type ConfigDocument = {
  default_profile?: string;
  profiles: Record<string, ConfigFile>;
  /** Whether the file is of the flat form (kept so when only its `default` profile changes). */
  flat: boolean;
};

/**
 * Reads the config file (no profile when there is none). A file that its group or others may read
 * holds a credential anyone on the machine could take: it is refused, as ssh refuses such a key.
 */
export async function readConfigDocument(path: string): Promise<ConfigDocument> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {}, flat: true };
    throw new CliError("config_unreadable", `cannot read ${path}: ${(error as Error).message}`);
  }
  if ((mode & 0o077) !== 0)
    throw new CliError(
      "config_insecure",
      `${path} is open to group or others (mode ${(mode & 0o777).toString(8)}); run: chmod 600 ${path}`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new CliError("config_invalid", `${path} is not valid JSON: ${(error as Error).message}`);
  }
  return documentOf(parsed, path);
}

/** The name of the profile a run uses: the one asked for, else the file's default, else `default`. */
export function profileName(document: ConfigDocument, requested: string | undefined): string {
  return requested || document.default_profile || DEFAULT_PROFILE;
}

/** Reads one profile of the config file ({} when the file or the profile does not exist). */
export async function readConfig(path: string, profile?: string): Promise<ConfigFile> {
  const document = await readConfigDocument(path);
  return document.profiles[profileName(document, profile)] ?? {};
}

function documentOf(parsed: unknown, path: string): ConfigDocument {
  if (!isObject(parsed)) throw new CliError("config_invalid", `${path} must hold a JSON object`);
  if (!("profiles" in parsed)) {
    const flat = configOf(parsed, path);
    return { profiles: Object.keys(flat).length ? { [DEFAULT_PROFILE]: flat } : {}, flat: true };
  }
  const document: ConfigDocument = { profiles: {}, flat: false };
  for (const [key, value] of Object.entries(parsed)) {
    if (key === "default_profile" && typeof value === "string") document.default_profile = value;
    else if (key === "profiles" && isObject(value)) {
      for (const [name, profile] of Object.entries(value)) {
        if (!isObject(profile))
          throw new CliError("config_invalid", `${path}: profile "${name}" must be a JSON object`);
        document.profiles[name] = configOf(profile, `${path} (profile "${name}")`);
      }
    } else
      throw new CliError(
        "config_invalid",
        `${path}: unknown or malformed field "${key}" (known: profiles, default_profile)`,
      );
  }
  return document;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The known fields of a parsed profile, each a string; anything else in the file is a mistake to report. */
function configOf(parsed: Record<string, unknown>, path: string): ConfigFile {
  const config: ConfigFile = {};
  for (const [key, value] of Object.entries(parsed)) {
    if (!(FIELDS as readonly string[]).includes(key))
      throw new CliError("config_invalid", `${path}: unknown field "${key}" (known: ${FIELDS.join(", ")})`);
    if (typeof value !== "string")
      throw new CliError("config_invalid", `${path}: field "${key}" must be a string`);
    config[key as keyof ConfigFile] = value;
  }
  return config;
}

/**
 * Writes the file with mode 0600 (its folder, when created here, 0700), through a temporary file
 * renamed over it: a reader never sees half a file, and the old file's rights do not carry over.
 */
export async function writeConfig(path: string, config: ConfigFile): Promise<void> {
  await writeFile(path, config);
}

async function writeFile(path: string, content: object): Promise<void> {
  const folder = dirname(path);
  const created = await mkdir(folder, { recursive: true, mode: 0o700 });
  // A folder that already existed is the user's (it may be a shared one): its rights are left alone.
  if (created !== undefined) await chmod(folder, 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, "wx", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(content, null, 2)}\n`);
    await file.chmod(0o600);
  } finally {
    await file.close();
  }
  try {
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/**
 * Writes the whole document: a file of the flat form stays flat while it holds only its `default`
 * profile and names no other default (older versions of the CLI read it so); else the profiles form.
 */
export async function writeConfigDocument(path: string, document: ConfigDocument): Promise<void> {
  const names = Object.keys(document.profiles);
  const staysFlat =
    document.flat &&
    names.every((name) => name === DEFAULT_PROFILE) &&
    (document.default_profile ?? DEFAULT_PROFILE) === DEFAULT_PROFILE;
  if (staysFlat) {
    await writeConfig(path, document.profiles[DEFAULT_PROFILE] ?? {});
    return;
  }
  await writeFile(path, {
    ...(document.default_profile !== undefined && { default_profile: document.default_profile }),
    profiles: document.profiles,
  });
}

/** Reads, changes and writes one profile of the file (the default one unless named); fields set to undefined are removed. */
export async function updateConfig(
  path: string,
  change: Partial<ConfigFile>,
  profile?: string,
): Promise<ConfigFile> {
  const document = await readConfigDocument(path);
  const name = profileName(document, profile);
  const next: ConfigFile = { ...document.profiles[name] };
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) delete next[key as keyof ConfigFile];
    else next[key as keyof ConfigFile] = value;
  }
  document.profiles[name] = next;
  await writeConfigDocument(path, document);
  return next;
}
