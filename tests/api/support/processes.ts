import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import {
  createTestDatabase,
  freePort,
  natsAuthorization,
  processIdentities,
  startNatsServer,
  type TestDatabase,
  type TestNatsServer,
  uniqueRedisPrefix,
  uniqueSuffix,
} from "@evalp/testing";
import { MIGRATIONS, streamNames } from "./stack.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));

export const SERVICES = ["control", "platform", "interview", "webhooks"] as const;
export type ProcessName = (typeof SERVICES)[number] | "gateway";

/**
 * The platform as `npm start` runs it: the gateway and the four services as child processes of
 * their own (built `dist/main.js`), on free ports, with their ops ports. Unlike the in-process
 * stack, a process can be killed, signalled and started again, as production does to it. With
 * `replicas`, every process runs that many times, as `REPLICAS=n npm start` runs them: each
 * caller gets the list of a service's replicas. A `replica` argument (0 by default) picks one.
 */
export type PlatformProcesses = {
  /** The first gateway's base URL. */
  url: string;
  /** Every gateway's base URL. */
  urls: string[];
  /** The environment every process started with (each adds its own ports and NATS user). */
  env: Record<string, string>;
  /**
   * The processes' NATS server, of their own, with production's users and permissions (each
   * process connects as itself); it can be stopped and started again.
   */
  nats: TestNatsServer;
  /** The ports of each process's first replica. */
  ports: Record<ProcessName, { rpc: number; ops: number }>;
  /** `http://127.0.0.1:<ops port>` of a process (`/healthz`, `/readyz`, `/metrics`). */
  opsUrl(name: ProcessName, replica?: number): string;
  /** Everything the processes wrote to stderr, prefixed with the process's name. */
  stderr: string[];
  /** The last log lines (stdout) of every process, prefixed with its name. */
  logTail(): string;
  /** The running child of a process (null once it exited). */
  child(name: ProcessName, replica?: number): ChildProcess | null;
  /** Sends a signal and waits for the exit: the exit code, or the signal's name. */
  kill(name: ProcessName, signal?: NodeJS.Signals, replica?: number): Promise<number | string | null>;
  /** Starts a process (again) on its ports and waits until its ops port says it is ready. */
  start(name: ProcessName, replica?: number): Promise<void>;
  /** Waits until every gateway's `/readyz` says `ready` (every dependency and upstream up). */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM to every process still running; their exit codes. */
  stop(): Promise<Array<number | string | null>>;
  /** Stops what still runs (SIGKILL), drops the database (if the processes created it) and streams. */
  close(): Promise<void>;
};

export type ProcessOptions = {
  /** Extra settings for every process (LOG_LEVEL, REDIS_URL, …). */
  env?: Record<string, string>;
  /** A database that exists and is migrated; by default a fresh one cloned from the template. */
  databaseUrl?: string;
  /** How many of every process (default 1). */
  replicas?: number;
  /** How long the processes may take to say they are ready at start (default 20 s). */
  startTimeoutMs?: number;
  /** The checkout whose built processes run (default this one): another release's, to run it against this schema. */
  root?: string;
};

/** Waits until `url` answers `status` (and, when given, a JSON body whose `status` is `state`). */
async function waitForStatus(url: string, status: number, timeoutMs: number, state?: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "no answer";
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      const text = await response.text();
      if (response.status === status && (state === undefined || JSON.parse(text).status === state)) return;
      last = `${response.status} ${text}`;
    } catch (error) {
      last = String(error);
    }
    await sleep(100);
  }
  throw new Error(`${url} did not answer ${status} within ${timeoutMs} ms (last: ${last})`);
}

export async function startProcesses(options: ProcessOptions = {}): Promise<PlatformProcesses> {
  const replicas = options.replicas ?? 1;
  let database: TestDatabase | undefined;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl) {
    database = await createTestDatabase(MIGRATIONS);
    databaseUrl = database.url;
  }
  const streams = streamNames(uniqueSuffix());
  const authorization = natsAuthorization(streams);
  const nats = await startNatsServer({ authorization });
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    DATABASE_URL: databaseUrl,
    REDIS_KEY_PREFIX: uniqueRedisPrefix(),
    JWT_SECRET: "process-test-secret-process-test-secret-0123",
    WEBHOOK_SECRETS_KEYS: "proc:process-test-webhook-secrets-key-0123456789",
    ...streams,
    NATS_URL: nats.url,
    ...options.env,
  };
  // Each process its own key pair and (the planes) its schema's role, as in production.
  const identities = processIdentities(databaseUrl);
  const NAMES = [...SERVICES, "gateway"] as const;
  const ports = {} as Record<ProcessName, Array<{ rpc: number; ops: number }>>;
  for (const name of NAMES) {
    ports[name] = [];
    for (let i = 0; i < replicas; i++) ports[name].push({ rpc: await freePort(), ops: await freePort() });
  }
  for (const name of SERVICES) {
    env[`${name.toUpperCase()}_URL`] = ports[name].map((port) => `http://127.0.0.1:${port.rpc}`).join(",");
  }
  const urls = ports.gateway.map((port) => `http://127.0.0.1:${port.rpc}`);
  const url = urls[0] as string;
  // What the platform hands out (realtime doors, links) names the first gateway.
  env.PUBLIC_URL ??= url;
  const portOf = (name: ProcessName, replica: number) => {
    const port = ports[name][replica];
    if (!port) throw new Error(`${name} has no replica ${replica}`);
    return port;
  };
  const opsUrl = (name: ProcessName, replica = 0) => `http://127.0.0.1:${portOf(name, replica).ops}`;
  const label = (name: ProcessName, replica: number) => (replicas === 1 ? name : `${name}-${replica + 1}`);

  const stderr: string[] = [];
  // The services log JSON lines to stdout; the last ones are kept for a failing test to show.
  const stdout: string[] = [];
  const TAIL = 400;
  const children = new Map<string, ChildProcess>();
  const spawnProcess = (name: ProcessName, replica: number) => {
    const port = portOf(name, replica);
    const portEnv =
      name === "gateway"
        ? { PORT: String(port.rpc), OPS_PORT: String(port.ops) }
        : { SERVICE_PORT: String(port.rpc), OPS_PORT: String(port.ops) };
    const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
      cwd: options.root ?? ROOT,
      env: { ...env, ...identities.env(name), ...portEnv, ...authorization.credentials(name) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const tag = label(name, replica);
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(`${tag}: ${chunk.toString()}`));
    if (child.stdout) {
      createInterface({ input: child.stdout }).on("line", (line) => {
        stdout.push(`${tag}: ${line}`);
        if (stdout.length > TAIL * 2) stdout.splice(0, stdout.length - TAIL);
      });
    }
    children.set(tag, child);
    return child;
  };
  const running = (name: ProcessName, replica = 0) => {
    const child = children.get(label(name, replica));
    return child && child.exitCode === null && child.signalCode === null ? child : null;
  };
  const kill = async (name: ProcessName, signal: NodeJS.Signals = "SIGKILL", replica = 0) => {
    const child = running(name, replica);
    if (!child) return children.get(label(name, replica))?.exitCode ?? null;
    const exited = once(child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
    child.kill(signal);
    const [code, killedBy] = await exited;
    return code ?? killedBy;
  };
  const start = async (name: ProcessName, replica = 0) => {
    if (running(name, replica)) return;
    spawnProcess(name, replica);
    // A process is ready when its ops port says so (a gateway is, while it serves at all).
    await waitForStatus(`${opsUrl(name, replica)}/readyz`, 200, 20_000);
  };
  const ready = async (timeoutMs = 20_000) => {
    await Promise.all(
      ports.gateway.map((port) =>
        waitForStatus(`http://127.0.0.1:${port.ops}/readyz`, 200, timeoutMs, "ready"),
      ),
    );
  };
  const every = NAMES.flatMap((name) =>
    Array.from({ length: replicas }, (_, replica) => ({ name, replica })),
  );

  for (const { name, replica } of every) spawnProcess(name, replica);
  try {
    // Every process up (a gateway's readiness alone would not see a replica of a service that
    // died at start), then every gateway seeing all it needs.
    await Promise.all(
      every.map(({ name, replica }) =>
        waitForStatus(`${opsUrl(name, replica)}/readyz`, 200, options.startTimeoutMs ?? 20_000),
      ),
    );
    await ready(options.startTimeoutMs);
  } catch (error) {
    for (const child of children.values()) child.kill("SIGKILL");
    await database?.drop();
    await nats.close();
    throw new Error(`${(error as Error).message}\n${stderr.join("")}\n${stdout.slice(-TAIL).join("\n")}`);
  }

  return {
    url,
    urls,
    env,
    nats,
    ports: Object.fromEntries(NAMES.map((name) => [name, portOf(name, 0)])) as Record<
      ProcessName,
      { rpc: number; ops: number }
    >,
    opsUrl,
    stderr,
    logTail: () => stdout.slice(-TAIL).join("\n"),
    child: running,
    kill,
    start,
    ready,
    stop: () => Promise.all(every.map(({ name, replica }) => kill(name, "SIGTERM", replica))),
    async close() {
      await Promise.all(every.map(({ name, replica }) => kill(name, "SIGKILL", replica)));
      await database?.drop();
      await nats.close();
    },
  };
}
