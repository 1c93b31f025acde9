import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import {
  createTestDatabase,
  freePort,
  type TestDatabase,
  uniqueRedisPrefix,
  uniqueSuffix,
} from "@evalp/testing";
import { dropStreams, MIGRATIONS, streamNames } from "./stack.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

export const SERVICES = ["control", "platform", "interview", "webhooks"] as const;
export type ProcessName = (typeof SERVICES)[number] | "gateway";

/**
 * The platform as `npm start` runs it: the gateway and the four services as child processes of
 * their own (built `dist/main.js`), on free ports, with their ops ports. Unlike the in-process
 * stack, a process can be killed, signalled and started again, as production does to it.
 */
export type PlatformProcesses = {
  /** The gateway's base URL. */
  url: string;
  /** The environment every process started with. */
  env: Record<string, string>;
  ports: Record<ProcessName, { rpc: number; ops: number }>;
  /** `http://127.0.0.1:<ops port>` of a process (`/healthz`, `/readyz`, `/metrics`). */
  opsUrl(name: ProcessName): string;
  /** Everything the processes wrote to stderr, prefixed with the process's name. */
  stderr: string[];
  /** The last log lines (stdout) of every process, prefixed with its name, to explain a failure. */
  logTail(): string;
  /** The running child of a process (null once it exited). */
  child(name: ProcessName): ChildProcess | null;
  /** Sends a signal and waits for the exit: the exit code, or the signal's name. */
  kill(name: ProcessName, signal?: NodeJS.Signals): Promise<number | string | null>;
  /** Starts a process (again) on its ports and waits until its ops port says it is ready. */
  start(name: ProcessName): Promise<void>;
  /** Waits until the gateway's `/readyz` answers 200 (every dependency and upstream up). */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM to every process still running; their exit codes in the order of `ports`. */
  stop(): Promise<Array<number | string | null>>;
  /** Stops what still runs (SIGKILL), drops the database (if the processes created it) and streams. */
  close(): Promise<void>;
};

export type ProcessOptions = {
  /** Extra settings for every process (LOG_LEVEL, REDIS_URL, NATS_URL, …). */
  env?: Record<string, string>;
  /** A database that exists and is migrated; by default a fresh one cloned from the template. */
  databaseUrl?: string;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitForStatus(url: string, status: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      if (response.status === status) return;
      last = `${response.status} ${await response.text()}`;
    } catch (error) {
      last = String(error);
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}

export async function startProcesses(options: ProcessOptions = {}): Promise<PlatformProcesses> {
  let database: TestDatabase | undefined;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl) {
    database = await createTestDatabase(MIGRATIONS);
    databaseUrl = database.url;
  }
  const streams = streamNames(uniqueSuffix());
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    DATABASE_URL: databaseUrl,
    REDIS_KEY_PREFIX: uniqueRedisPrefix(),
    JWT_SECRET: "process-test-secret-process-test-secret-0123",
    ...streams,
    ...options.env,
  };
  const ports = {} as Record<ProcessName, { rpc: number; ops: number }>;
  for (const name of [...SERVICES, "gateway"] as const)
    ports[name] = { rpc: await freePort(), ops: await freePort() };
  for (const name of SERVICES) env[`${name.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[name].rpc}`;
  const url = `http://127.0.0.1:${ports.gateway.rpc}`;
  const opsUrl = (name: ProcessName) => (name === "gateway" ? url : `http://127.0.0.1:${ports[name].ops}`);

  const stderr: string[] = [];
  // The services log JSON lines to stdout; the last ones are kept for a failing test to show.
  const stdout: string[] = [];
  const TAIL = 400;
  const children = new Map<ProcessName, ChildProcess>();
  const spawnProcess = (name: ProcessName) => {
    const portEnv =
      name === "gateway"
        ? { PORT: String(ports.gateway.rpc), OPS_PORT: String(ports.gateway.ops) }
        : { SERVICE_PORT: String(ports[name].rpc), OPS_PORT: String(ports[name].ops) };
    const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
      cwd: ROOT,
      env: { ...env, ...portEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(`${name}: ${chunk.toString()}`));
    if (child.stdout) {
      createInterface({ input: child.stdout }).on("line", (line) => {
        stdout.push(`${name}: ${line}`);
        if (stdout.length > TAIL * 2) stdout.splice(0, stdout.length - TAIL);
      });
    }
    children.set(name, child);
    return child;
  };
  const running = (name: ProcessName) => {
    const child = children.get(name);
    return child && child.exitCode === null && child.signalCode === null ? child : null;
  };
  const kill = async (name: ProcessName, signal: NodeJS.Signals = "SIGKILL") => {
    const child = running(name);
    if (!child) return children.get(name)?.exitCode ?? null;
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill(signal);
    const [code, killedBy] = await exited;
    return code ?? killedBy;
  };
  const start = async (name: ProcessName) => {
    if (running(name)) return;
    spawnProcess(name);
    // A service is ready when its ops port says so; the gateway when it answers at all.
    await waitForStatus(`${opsUrl(name)}/${name === "gateway" ? "healthz" : "readyz"}`, 200, 20_000);
  };
  const ready = (timeoutMs = 20_000) => waitForStatus(`${url}/readyz`, 200, timeoutMs);

  for (const name of SERVICES) spawnProcess(name);
  spawnProcess("gateway");
  try {
    await ready();
  } catch (error) {
    for (const child of children.values()) child.kill("SIGKILL");
    await database?.drop();
    throw new Error(`${(error as Error).message}\n${stderr.join("")}\n${stdout.slice(-TAIL).join("\n")}`);
  }

  const order = [...SERVICES, "gateway"] as const;
  return {
    url,
    env,
    ports,
    opsUrl,
    stderr,
    logTail: () => stdout.slice(-TAIL).join("\n"),
    child: running,
    kill,
    start,
    ready,
    stop: () => Promise.all(order.map((name) => kill(name, "SIGTERM"))),
    async close() {
      await Promise.all(order.map((name) => kill(name, "SIGKILL")));
      await database?.drop();
      await dropStreams(streams, env.NATS_URL).catch(() => {});
    },
  };
}
