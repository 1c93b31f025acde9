import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pgbouncer } from "@evalp/local-servers";
import { testServerUrl } from "./database.js";
import { freePort } from "./ports.js";

/** A PgBouncer of a test's own in front of the tests' PostgreSQL server. */
export type TestPgbouncer = {
  port: number;
  /** `databaseUrl` (a database on the tests' server) as reached through this pooler. */
  pooled(databaseUrl: string): string;
  /** Stops it and removes its configuration. */
  close(): Promise<void>;
};

/**
 * PgBouncer configured as CloudNativePG's Pooler configures it in production: transaction
 * pooling, and the startup parameters `options` and `extra_float_digits` ignored (the operator
 * always adds both to `ignore_startup_parameters`), so what a client asks for in `options`
 * (search_path) never reaches PostgreSQL through it.
 */
export async function startPgbouncer(settings: Record<string, string> = {}): Promise<TestPgbouncer> {
  const server = new URL(testServerUrl());
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "evalp-pgbouncer-"));
  const pooler = pgbouncer({
    host: "127.0.0.1",
    port,
    server: { host: server.hostname, port: Number(server.port || 5432) },
    poolMode: "transaction",
    users: [decodeURIComponent(server.username)],
    dir,
    logFile: join(dir, "pgbouncer.log"),
    settings: {
      ignore_startup_parameters: "extra_float_digits,options",
      default_pool_size: "2",
      ...settings,
    },
  });
  await pooler.start();
  return {
    port,
    pooled(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = "127.0.0.1";
      url.port = String(port);
      return url.toString();
    },
    async close() {
      await pooler.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
