import { ServerNotInstalledError, UnreachableServerError } from "@evalp/local-servers";
import { ensureTestServers } from "./servers.js";

/**
 * vitest's global setup (vitest.config.ts): the servers the tests use answer before any test
 * file runs, and the private ones started for the run stop when it ends.
 */
export default async function setup(): Promise<() => Promise<void>> {
  try {
    const servers = await ensureTestServers();
    return () => servers.stop();
  } catch (error) {
    // What to install or which setting to fix, without a stack trace around it.
    if (error instanceof ServerNotInstalledError || error instanceof UnreachableServerError) error.stack = "";
    throw error;
  }
}
