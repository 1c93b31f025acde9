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
    if (error instanceof ServerNotInstalledError || error instanceof UnreachableServerError) {
      // What to install or which setting to fix, as the one line it is: vitest would wrap it in
      // a report of test files it never got to. Nothing has been started at this point.
      console.error(error.message);
      process.exit(1);
    }
    throw error;
  }
}
