import { redisServer } from "@evalp/local-servers";
import { freePort } from "./ports.js";

/** A Redis server of a test's own: its own port, no persistence, stopped and started at will. */
export type TestRedisServer = {
  url: string;
  port: number;
  /** Kills the server (SIGKILL by default) and waits for it to exit; what it held is gone. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again, empty, on the same port. */
  start(): Promise<void>;
  /** Stops it for good. */
  close(): Promise<void>;
};

/**
 * Starts `redis-server` on 127.0.0.1 and a free port without snapshots or an append-only file,
 * so that a test can take "Redis" away and bring it back without disturbing the shared server
 * other tests use.
 */
export async function startRedisServer(): Promise<TestRedisServer> {
  const port = await freePort();
  const server = redisServer({ host: "127.0.0.1", port, stopSignal: "SIGKILL" });
  await server.start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    stop: (signal) => server.stop(signal),
    start: () => server.start(),
    close: () => server.stop(),
  };
}
