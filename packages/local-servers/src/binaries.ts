import { execFileSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";

/** The servers the platform needs. */
export type ServerKind = "postgres" | "redis" | "nats";

/** Environment variables, as `process.env` has them. */
export type Env = Record<string, string | undefined>;

/** What each server is called, and the Debian package that installs it. */
const PACKAGES: Record<ServerKind, { name: string; debian: string }> = {
  postgres: { name: "PostgreSQL server", debian: "postgresql" },
  redis: { name: "Redis server", debian: "redis-server" },
  nats: { name: "NATS server", debian: "nats-server" },
};

/** Where Debian installs each PostgreSQL major version's server programs (not on PATH). */
const DEBIAN_POSTGRES_ROOT = "/usr/lib/postgresql";
/** Debian installs nats-server into /usr/sbin, which only root's PATH has. */
const DEBIAN_NATS_SERVER = "/usr/sbin/nats-server";

/** One line naming what to install, e.g. `Redis server not found: install it (Debian: sudo apt-get install redis-server)`. */
export function installInstruction(kinds: ServerKind[]): string {
  const names = kinds.map((kind) => PACKAGES[kind].name);
  const listed = names.length > 1 ? `${names.slice(0, -1).join(", ")} and ${names.at(-1)}` : names[0];
  const packages = kinds.map((kind) => PACKAGES[kind].debian).join(" ");
  return `${listed} not found: install ${kinds.length > 1 ? "them" : "it"} (Debian: sudo apt-get install ${packages})`;
}

/** A server program this machine does not have; the message is the one line saying what to install. */
export class ServerNotInstalledError extends Error {
  constructor(readonly kinds: ServerKind[]) {
    super(installInstruction(kinds));
    this.name = "ServerNotInstalledError";
  }
}

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The first `program` on the PATH of `env`, as a shell would find it. */
function onPath(program: string, env: Env): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && isExecutable(join(dir, program))) return join(dir, program);
  }
  return undefined;
}

/** A directory with the three programs a private cluster runs. */
const holdsServer = (dir: string) =>
  ["initdb", "pg_ctl", "postgres"].every((program) => isExecutable(join(dir, program)));

/**
 * The directory of PostgreSQL's server programs (initdb, pg_ctl, postgres): `POSTGRES_BIN_DIR`
 * when set (and then only it); else `pg_config --bindir`; else where the `initdb` on PATH really
 * is (Homebrew, Fedora); else the newest version under Debian's /usr/lib/postgresql.
 */
export function postgresBinDir(env: Env = process.env): string {
  if (env.POSTGRES_BIN_DIR !== undefined) {
    if (holdsServer(env.POSTGRES_BIN_DIR)) return env.POSTGRES_BIN_DIR;
    throw new ServerNotInstalledError(["postgres"]);
  }
  const pgConfig = onPath("pg_config", env);
  if (pgConfig) {
    try {
      const dir = execFileSync(pgConfig, ["--bindir"], { encoding: "utf8", env }).trim();
      if (holdsServer(dir)) return dir;
    } catch {
      // A pg_config that does not run says nothing: look further.
    }
  }
  const initdb = onPath("initdb", env);
  if (initdb) {
    const dir = dirname(realpathSync(initdb));
    if (holdsServer(dir)) return dir;
  }
  const versions = existsSync(DEBIAN_POSTGRES_ROOT)
    ? readdirSync(DEBIAN_POSTGRES_ROOT)
        .filter((version) => holdsServer(join(DEBIAN_POSTGRES_ROOT, version, "bin")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0]) return join(DEBIAN_POSTGRES_ROOT, versions[0], "bin");
  throw new ServerNotInstalledError(["postgres"]);
}

/** `REDIS_SERVER_BIN` when set (and then only it), else `redis-server` on PATH. */
export function redisServerBinary(env: Env = process.env): string {
  const found = env.REDIS_SERVER_BIN !== undefined ? env.REDIS_SERVER_BIN : onPath("redis-server", env);
  if (found && isExecutable(found)) return found;
  throw new ServerNotInstalledError(["redis"]);
}

/** `NATS_SERVER_BIN` when set (and then only it), else `nats-server` on PATH, else Debian's /usr/sbin one. */
export function natsServerBinary(env: Env = process.env): string {
  const found =
    env.NATS_SERVER_BIN !== undefined
      ? env.NATS_SERVER_BIN
      : (onPath("nats-server", env) ?? DEBIAN_NATS_SERVER);
  if (isExecutable(found)) return found;
  throw new ServerNotInstalledError(["nats"]);
}

/** Debian installs pgbouncer into /usr/sbin, which only root's PATH has. */
const DEBIAN_PGBOUNCER = "/usr/sbin/pgbouncer";

/**
 * `PGBOUNCER_BIN` when set (and then only it), else `pgbouncer` on PATH, else Debian's
 * /usr/sbin one. Only the tests that run the platform behind a pooler need it.
 */
export function pgbouncerBinary(env: Env = process.env): string {
  const found =
    env.PGBOUNCER_BIN !== undefined ? env.PGBOUNCER_BIN : (onPath("pgbouncer", env) ?? DEBIAN_PGBOUNCER);
  if (isExecutable(found)) return found;
  throw new Error("PgBouncer not found: install it (Debian: sudo apt-get install pgbouncer)");
}

/** Where each server's programs are (Postgres: their directory). */
export type ServerBinaries = { postgres?: string; redis?: string; nats?: string };

/**
 * Finds the programs of every server in `kinds`, or throws one ServerNotInstalledError naming
 * all that are missing, so that one line says everything there is to install.
 */
export function findServerBinaries(kinds: ServerKind[], env: Env = process.env): ServerBinaries {
  const lookups = { postgres: postgresBinDir, redis: redisServerBinary, nats: natsServerBinary };
  const found: ServerBinaries = {};
  const missing: ServerKind[] = [];
  for (const kind of kinds) {
    try {
      found[kind] = lookups[kind](env);
    } catch (error) {
      if (!(error instanceof ServerNotInstalledError)) throw error;
      missing.push(kind);
    }
  }
  if (missing.length > 0) throw new ServerNotInstalledError(missing);
  return found;
}
