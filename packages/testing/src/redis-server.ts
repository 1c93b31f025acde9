import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { answers, freePort } from "./ports.js";

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

/** `REDIS_SERVER_BIN`, else whatever PATH finds. */
const BINARY = process.env.REDIS_SERVER_BIN ?? "redis-server";

/**
 * Starts `redis-server` on 127.0.0.1 and a free port without snapshots or an append-only file,
 * so that a test can take "Redis" away and bring it back without disturbing the shared server
 * other tests use.
 */
export async function startRedisServer(): Promise<TestRedisServer> {
  const port = await freePort();
  let child: ChildProcess | null = null;

  async function start() {
    if (child && child.exitCode === null && child.signalCode === null) return;
    const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"];
    const started = spawn(BINARY, args, { stdio: "ignore" });
    child = started;
    for (let i = 0; i < 100; i++) {
      if (await answers(port)) return;
      if (started.exitCode !== null) throw new Error(`redis-server exited with ${started.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("redis-server did not start");
  }

  async function stop(signal: NodeJS.Signals = "SIGKILL") {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, "exit");
    running.kill(signal);
    await exited;
  }

  await start();
  return { url: `redis://127.0.0.1:${port}`, port, stop, start, close: () => stop() };
}
