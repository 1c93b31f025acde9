import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { configSchema } from "@evalp/kit";
import { ensureServers, type LocalServers } from "@evalp/local-servers";
import { testServerUrl } from "./database.js";

/** The repository's root, from this module's place in packages/testing/dist. */
const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

/**
 * Makes sure the servers the tests use answer: the test databases' Postgres (testServerUrl),
 * `REDIS_URL` and `NATS_URL` (kit's defaults when unset). Where one does not answer on a
 * loopback address, a private server is started there with its data under the repository's
 * `var/` (ensureServers); `stop()` stops those.
 */
export function ensureTestServers(env: NodeJS.ProcessEnv = process.env): Promise<LocalServers> {
  const settings = configSchema.pick({ REDIS_URL: true, NATS_URL: true, VAR_DIR: true }).parse(env);
  return ensureServers({
    databaseUrl: testServerUrl(),
    redisUrl: settings.REDIS_URL,
    natsUrl: settings.NATS_URL,
    varDir: resolve(ROOT, settings.VAR_DIR),
    env,
    log: (line) => console.error(line),
  });
}
