import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PostgresStopMode, postgresBaseBackup, postgresCluster } from "@evalp/local-servers";
import { freePort } from "./ports.js";

export type { PostgresStopMode } from "@evalp/local-servers";

/** A Postgres cluster of a test's own: its own data directory and port, stopped and started at will. */
export type TestPostgresServer = {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`; swap the path for another database. */
  url: string;
  port: number;
  /** The cluster's data directory. */
  dataDir: string;
  /** Stops the server (`fast` by default), which ends every connection to it. */
  stop(mode?: PostgresStopMode): Promise<void>;
  /** Starts it again on the same port and data, and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops (`fast`) and starts it: every connection is cut, the data stays. */
  restart(): Promise<void>;
  /** Stops it and removes its data. */
  close(): Promise<void>;
};

/**
 * Creates a cluster in a temporary directory (trust authentication, superuser `postgres`) and
 * starts it on 127.0.0.1 and a free port, so that a test can stop and restart "Postgres"
 * without disturbing the shared server other tests use (as root, postgresCluster runs it as
 * the `postgres` OS user). `settings` are given to the server at every start (`-c`).
 */
export async function startPostgresServer(
  options: { settings?: Record<string, string> } = {},
): Promise<TestPostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), "evalp-pg-"));
  return serve(dir, { init: true, settings: options.settings ?? {} });
}

/** A base backup of a running test server (pg_basebackup), in a temporary directory of its own. */
export async function takeBaseBackup(server: TestPostgresServer): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "evalp-pg-backup-"));
  await postgresBaseBackup({ host: "127.0.0.1", port: server.port, user: "postgres", dir });
  return dir;
}

/**
 * Starts a server on a base backup (takeBaseBackup's directory; used up by it) as a point-in-time
 * restore: `recovery.signal` and the recovery `settings` (restore_command, recovery_target_time,
 * recovery_target_action …). It resolves once the server accepts connections, which may be
 * before recovery has ended (`pg_is_in_recovery()`).
 */
export async function startRestoredPostgresServer(
  backupDir: string,
  settings: Record<string, string>,
): Promise<TestPostgresServer> {
  writeFileSync(join(backupDir, "data", "recovery.signal"), "");
  return serve(backupDir, { init: false, settings });
}

async function serve(
  dir: string,
  options: { init: boolean; settings: Record<string, string> },
): Promise<TestPostgresServer> {
  const port = await freePort();
  const cluster = postgresCluster({
    dir,
    host: "127.0.0.1",
    port,
    superuser: "postgres",
    socketDir: dir,
    durable: false,
    settings: options.settings,
  });
  if (options.init) await cluster.init();
  await cluster.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    dataDir: cluster.dataDir,
    stop: (mode: PostgresStopMode = "fast") => cluster.stop(mode),
    start: () => cluster.start(),
    async restart() {
      await cluster.stop("fast");
      await cluster.start();
    },
    async close() {
      await cluster.stop("immediate").catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
