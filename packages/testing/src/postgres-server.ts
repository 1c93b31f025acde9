import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type PostgresStopMode, postgresCluster } from "@evalp/local-servers";
import { freePort } from "./ports.js";

export type { PostgresStopMode } from "@evalp/local-servers";

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

/**
 * Creates a cluster in a temporary directory (trust authentication, superuser `postgres`) and
 * starts it on 127.0.0.1 and a free port, so that a test can stop and restart "Postgres"
 * without disturbing the shared server other tests use (as root, postgresCluster runs it as
 * the `postgres` OS user).
 */
export async function startPostgresServer(): Promise<TestPostgresServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "evalp-pg-"));
  const cluster = postgresCluster({
    dir,
    host: "127.0.0.1",
    port,
    superuser: "postgres",
    socketDir: dir,
    durable: false,
  });
  await cluster.init();
  await cluster.start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
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
