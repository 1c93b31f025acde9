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

/**
 * Reads the config file ({} when there is none). A file that its group or others may read holds a
 * credential anyone on the machine could take: it is refused, as ssh refuses such a key.
 */
export async function readConfig(path: string): Promise<ConfigFile> {
  let mode: number;
  try {
    mode = (await stat(path)).mode;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return {};
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
  return configOf(parsed, path);
}

/** The known fields of a parsed file, each a string; anything else in the file is a mistake to report. */
function configOf(parsed: unknown, path: string): ConfigFile {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new CliError("config_invalid", `${path} must hold a JSON object`);
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
  const folder = dirname(path);
  const created = await mkdir(folder, { recursive: true, mode: 0o700 });
  // A folder that already existed is the user's (it may be a shared one): its rights are left alone.
  if (created !== undefined) await chmod(folder, 0o700);
  const temporary = `${path}.${process.pid}.tmp`;
  const file = await open(temporary, "wx", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(config, null, 2)}\n`);
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

/** Reads, changes and writes the file; fields set to undefined are removed. */
export async function updateConfig(path: string, change: Partial<ConfigFile>): Promise<ConfigFile> {
  const next: ConfigFile = { ...(await readConfig(path)) };
  for (const [key, value] of Object.entries(change)) {
    if (value === undefined) delete next[key as keyof ConfigFile];
    else next[key as keyof ConfigFile] = value;
  }
  await writeConfig(path, next);
  return next;
}
