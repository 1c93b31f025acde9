import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pgbouncerBinary } from "./binaries.js";
import { type ServerProcess, serverProcess } from "./server-process.js";

export type PgbouncerOptions = {
  host: string;
  port: number;
  /** The PostgreSQL server whose connections it pools: every database there, by its own name. */
  server: { host: string; port: number };
  /** `transaction`: a server connection is lent for one transaction, as in production. */
  poolMode: "session" | "transaction" | "statement";
  /** The users it lets in, without a password (the servers here trust loopback connections). */
  users: string[];
  /** Where its configuration is written. */
  dir: string;
  /** Further `[pgbouncer]` settings (`ignore_startup_parameters`, `default_pool_size`, …). */
  settings?: Record<string, string>;
  /** `pgbouncer`; default: found as pgbouncerBinary finds it. */
  binary?: string;
  logFile?: string;
  stopSignal?: NodeJS.Signals;
};

/** The OS user pgbouncer switches to when started as root, which it refuses to run as. */
function unprivilegedUser(): string {
  for (const name of ["postgres", "nobody"]) {
    try {
      execFileSync("id", ["-u", name], { stdio: "ignore" });
      return name;
    } catch {
      // No such user: try the next.
    }
  }
  throw new Error("PgBouncer does not run as root, and there is no postgres or nobody user to run it as");
}

/** PgBouncer on one address, pooling one PostgreSQL server's connections in `poolMode`. */
export function pgbouncer(options: PgbouncerOptions): ServerProcess {
  mkdirSync(options.dir, { recursive: true });
  // Readable by the user it switches to when started as root.
  chmodSync(options.dir, 0o755);
  const authFile = join(options.dir, "userlist.txt");
  writeFileSync(authFile, options.users.map((user) => `"${user}" ""\n`).join(""), { mode: 0o644 });
  const settings: Record<string, string> = {
    listen_addr: options.host,
    listen_port: String(options.port),
    unix_socket_dir: "",
    pool_mode: options.poolMode,
    auth_type: "trust",
    auth_file: authFile,
    ...options.settings,
  };
  const ini = [
    "[databases]",
    `* = host=${options.server.host} port=${options.server.port}`,
    "",
    "[pgbouncer]",
    ...Object.entries(settings).map(([key, value]) => `${key} = ${value}`),
    "",
  ].join("\n");
  const configFile = join(options.dir, "pgbouncer.ini");
  writeFileSync(configFile, ini, { mode: 0o644 });
  const asRoot = process.getuid?.() === 0;
  return serverProcess({
    name: "pgbouncer",
    binary: options.binary ?? pgbouncerBinary(),
    args: [...(asRoot ? ["-u", unprivilegedUser()] : []), configFile],
    host: options.host,
    port: options.port,
    ...(options.logFile ? { logFile: options.logFile } : {}),
    ...(options.stopSignal ? { stopSignal: options.stopSignal } : {}),
  });
}
