import { execFile, execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chownSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { postgresBinDir } from "./binaries.js";
import { logTail } from "./server-process.js";

const run = promisify(execFile);

/** How `pg_ctl stop` ends the server: `fast` ends every session, `immediate` is a crash. */
export type PostgresStopMode = "smart" | "fast" | "immediate";

export type PostgresClusterOptions = {
  /** The cluster's directory: its data in `data/`, the server's log in `server.log`. */
  dir: string;
  host: string;
  port: number;
  /** The superuser initdb creates: the role a URL without a user name connects as is the OS user's. */
  superuser: string;
  /** Where the server's Unix socket goes; none when absent (TCP only, as the URLs say). */
  socketDir?: string;
  /** The directory of initdb, pg_ctl and postgres; default: found as postgresBinDir finds it. */
  binDir?: string;
  /** `initdb --no-sync` when false: faster, for a cluster that does not outlive a test. */
  durable?: boolean;
  /** Further server settings, given as `-c name=value` at every start (WAL archiving, recovery). */
  settings?: Record<string, string>;
};

/** A PostgreSQL cluster of the project's own, run with pg_ctl: created once, started and stopped at will. */
export type PostgresCluster = {
  readonly dataDir: string;
  /** Whether initdb has already created it (its data is kept between runs). */
  exists(): boolean;
  /** initdb: trust authentication (for connections to its loopback address only), UTF-8, locale C. */
  init(): Promise<void>;
  /** Starts it (unless this object already did) and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops it (`fast` by default) and waits until it has. */
  stop(mode?: PostgresStopMode): Promise<void>;
  readonly running: boolean;
};

/** The uid and gid of an OS user, or undefined when there is none. */
function osUser(name: string): { uid: number; gid: number } | undefined {
  try {
    const id = (flag: string) => Number(execFileSync("id", [flag, name], { encoding: "utf8" }).trim());
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    return undefined;
  }
}

/** Where clusters live whose preferred directory the postgres user cannot reach (kept across reboots). */
const REACHABLE_ROOT = "/var/tmp/evalp";

/**
 * Where a cluster meant for `preferred` can live. As root the server runs as the postgres user,
 * who cannot get into a checkout under a home only root may enter, or into a `mktemp -d` folder:
 * such a cluster lives under /var/tmp/evalp instead, in a folder named by a hash of `preferred`,
 * so each checkout keeps its own cluster (and its data) from one run to the next.
 */
export function postgresDataDir(preferred: string): { dir: string; moved: boolean } {
  if (process.getuid?.() !== 0) return { dir: preferred, moved: false };
  const parent = dirname(preferred);
  mkdirSync(parent, { recursive: true });
  const reachable = spawnSync("runuser", ["-u", "postgres", "--", "test", "-x", parent]).status === 0;
  if (reachable) return { dir: preferred, moved: false };
  const key = createHash("sha256").update(preferred).digest("hex").slice(0, 16);
  return { dir: join(REACHABLE_ROOT, key, "postgres"), moved: true };
}

/** A value of postgres's `-o` options as pg_ctl's shell reads it: single-quoted. */
const quoted = (value: string) => `'${value.replaceAll("'", "'\\''")}'`;

/**
 * PostgreSQL refuses to run as root: as root, initdb and pg_ctl run as the `postgres` OS user
 * (the one Debian's package creates), who then owns the cluster's directory.
 */
export function postgresCluster(options: PostgresClusterOptions): PostgresCluster {
  const bin = options.binDir ?? postgresBinDir();
  const dataDir = join(options.dir, "data");
  const logFile = join(options.dir, "server.log");
  const asRoot = process.getuid?.() === 0;
  let running = false;

  const pg = async (program: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]]
      : [join(bin, program), args];
    try {
      await run(file, argv, { cwd: options.dir });
    } catch (error) {
      const stderr = ((error as { stderr?: string }).stderr ?? "").trim();
      const tail = logTail(logFile);
      throw new Error(`${program} ${args.join(" ")} failed: ${stderr}${tail ? `\n${tail}` : ""}`);
    }
  };

  /** The cluster's directory, owned by whoever runs the server. */
  const prepareDir = async () => {
    mkdirSync(options.dir, { recursive: true, mode: 0o700 });
    if (!asRoot) return;
    const owner = osUser("postgres");
    if (!owner)
      throw new Error("PostgreSQL does not run as root, and there is no postgres user to run it as");
    chownSync(options.dir, owner.uid, owner.gid);
    // Every directory above must let that user through, or initdb fails with a vaguer message.
    await run("runuser", ["-u", "postgres", "--", "test", "-w", options.dir]).catch(() => {
      throw new Error(
        `the postgres user cannot write ${options.dir} (PostgreSQL does not run as root): let it through the directories above, or set VAR_DIR to a directory it can reach`,
      );
    });
  };

  return {
    dataDir,
    exists: () => existsSync(join(dataDir, "PG_VERSION")),
    async init() {
      await prepareDir();
      const args = ["-D", dataDir, "-U", options.superuser, "-A", "trust", "-E", "UTF8", "--locale=C"];
      await pg("initdb", options.durable === false ? [...args, "--no-sync"] : args);
    },
    async start() {
      if (running) return;
      await prepareDir();
      const settings = [
        `-p ${options.port}`,
        `-c listen_addresses=${quoted(options.host)}`,
        `-c unix_socket_directories=${quoted(options.socketDir ?? "")}`,
        ...Object.entries(options.settings ?? {}).map(([name, value]) => `-c ${name}=${quoted(value)}`),
      ].join(" ");
      await pg("pg_ctl", ["-D", dataDir, "-l", logFile, "-o", settings, "-w", "-t", "60", "start"]);
      running = true;
    },
    async stop(mode: PostgresStopMode = "fast") {
      if (!running) return;
      await pg("pg_ctl", ["-D", dataDir, "-m", mode, "-w", "-t", "60", "stop"]);
      running = false;
    },
    get running() {
      return running;
    },
  };
}

/**
 * Takes a base backup of a running server into `<dir>/data` with pg_basebackup (streaming the WAL
 * it needs, a checkpoint at once), owned by whoever runs servers here: a cluster made of it with
 * postgresCluster({ dir }) starts from the backup (with `recovery.signal` and a restore_command,
 * as a point-in-time restore).
 */
export async function postgresBaseBackup(options: {
  host: string;
  port: number;
  user: string;
  dir: string;
  binDir?: string;
}): Promise<void> {
  const bin = options.binDir ?? postgresBinDir();
  const asRoot = process.getuid?.() === 0;
  mkdirSync(options.dir, { recursive: true, mode: 0o700 });
  if (asRoot) {
    const owner = osUser("postgres");
    if (!owner)
      throw new Error("PostgreSQL does not run as root, and there is no postgres user to run it as");
    chownSync(options.dir, owner.uid, owner.gid);
  }
  const args = [
    "-D",
    join(options.dir, "data"),
    "-h",
    options.host,
    "-p",
    String(options.port),
    "-U",
    options.user,
    "-X",
    "stream",
    "-c",
    "fast",
    "--no-sync",
  ];
  const program = join(bin, "pg_basebackup");
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", program, ...args]] : [program, args];
  try {
    await run(file, argv, { cwd: options.dir });
  } catch (error) {
    throw new Error(`pg_basebackup failed: ${((error as { stderr?: string }).stderr ?? "").trim()}`);
  }
}
