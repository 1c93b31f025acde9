import { execFile, execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { freePort } from "./ports.js";

const run = promisify(execFile);

/** How `pg_ctl stop` ends the server: `fast` ends every session, `immediate` is a crash. */
export type PostgresStopMode = "smart" | "fast" | "immediate";

/** A Postgres cluster of a test's own: its own data directory and port, stopped and started at will. */
export type TestPostgresServer = {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; swap the path for another database. */
  url: string;
  port: number;
  /** Stops the server (`fast` by default), which ends every connection to it. */
  stop(mode?: PostgresStopMode): Promise<void>;
  /** Starts it again on the same port and data, and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops (`fast`) and starts it: every connection is cut, the data stays. */
  restart(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
};

/** `POSTGRES_BIN_DIR`, else `pg_config --bindir` when it holds the server, else the newest Debian one. */
function binDir(): string {
  if (process.env.POSTGRES_BIN_DIR) return process.env.POSTGRES_BIN_DIR;
  try {
    const dir = execFileSync("pg_config", ["--bindir"], { encoding: "utf8" }).trim();
    if (existsSync(join(dir, "initdb"))) return dir;
  } catch {
    // No pg_config: look where Debian installs servers.
  }
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((version) => existsSync(join(root, version, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0]) return join(root, versions[0], "bin");
  throw new Error("no Postgres server binaries found (set POSTGRES_BIN_DIR)");
}

function ownerIds(user: string): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/**
 * Creates a cluster in a temporary directory (trust authentication, superuser `postgres`) and
 * starts it on 127.0.0.1 and a free port, so that a test can stop and restart "Postgres"
 * without disturbing the shared server other tests use. Postgres refuses to run as root: as
 * root the binaries run as the `postgres` OS user, who then owns the directory.
 */
export async function startPostgresServer(): Promise<TestPostgresServer> {
  const bin = binDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "evalp-pg-"));
  const data = join(dir, "data");
  const log = join(dir, "server.log");
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { uid, gid } = ownerIds("postgres");
    chownSync(dir, uid, gid);
  }

  const pg = async (program: string, args: string[]) => {
    const [file, argv] = asRoot
      ? ["runuser", ["-u", "postgres", "--", join(bin, program), ...args]]
      : [join(bin, program), args];
    try {
      await run(file, argv, { cwd: dir });
    } catch (error) {
      const tail = existsSync(log) ? readFileSync(log, "utf8").split("\n").slice(-20).join("\n") : "";
      const stderr = (error as { stderr?: string }).stderr ?? "";
      throw new Error(`${program} ${args.join(" ")} failed: ${stderr}\n${tail}`);
    }
  };

  let running = false;
  const start = async () => {
    if (running) return;
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`;
    await pg("pg_ctl", ["-D", data, "-l", log, "-o", options, "-w", "-t", "30", "start"]);
    running = true;
  };
  const stop = async (mode: PostgresStopMode = "fast") => {
    if (!running) return;
    await pg("pg_ctl", ["-D", data, "-m", mode, "-w", "-t", "30", "stop"]);
    running = false;
  };

  await pg("initdb", ["-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    async restart() {
      await stop("fast");
      await start();
    },
    async close() {
      await stop("immediate").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
