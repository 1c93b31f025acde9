import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, existsSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { answers } from "./reachability.js";

/** A server program run as a child process, answering on one address. */
export type ServerProcess = {
  /** Starts it (unless it runs) and waits until it accepts connections. */
  start(): Promise<void>;
  /** Sends `signal` and waits for it to exit; nothing when it is not running. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  readonly running: boolean;
};

export type ServerProcessOptions = {
  /** How messages name it (`redis-server`). */
  name: string;
  binary: string;
  args: string[];
  host: string;
  port: number;
  /** Where its output goes (appended); discarded when absent. Its last lines explain a failed start. */
  logFile?: string;
  /**
   * In a process group of its own, so that the Ctrl-C a terminal sends to the foreground group
   * reaches only the parent, which stops the server once what uses it has stopped.
   */
  detached?: boolean;
  /** How long it may take to answer (default 10 s: JetStream recovers its store first). */
  startTimeoutMs?: number;
  /** The signal `stop()` sends by default. */
  stopSignal?: NodeJS.Signals;
};

const isRunning = (child: ChildProcess | null): child is ChildProcess =>
  child !== null && child.exitCode === null && child.signalCode === null;

/** The last lines of a log file, for an error message. */
export function logTail(file: string | undefined, lines = 20): string {
  if (!file || !existsSync(file)) return "";
  return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
}

export function serverProcess(options: ServerProcessOptions): ServerProcess {
  let child: ChildProcess | null = null;

  async function start() {
    if (isRunning(child)) return;
    const output = options.logFile ? openSync(options.logFile, "a") : "ignore";
    let started: ChildProcess;
    try {
      started = spawn(options.binary, options.args, {
        stdio: ["ignore", output, output],
        detached: options.detached ?? false,
      });
    } finally {
      if (typeof output === "number") closeSync(output);
    }
    child = started;
    // A program that cannot be run (ENOENT, EACCES) reports it as an event, not by exiting.
    let spawnError: Error | undefined;
    started.once("error", (error) => {
      spawnError = error;
    });
    const deadline = Date.now() + (options.startTimeoutMs ?? 10_000);
    const failed = (why: string) => {
      const tail = logTail(options.logFile);
      return new Error(`${options.name} ${why}${tail ? `:\n${tail}` : ""}`);
    };
    while (Date.now() < deadline) {
      if (await answers(options.host, options.port, 500)) return;
      if (spawnError) throw failed(`did not start (${spawnError.message})`);
      if (started.exitCode !== null || started.signalCode !== null) {
        throw failed(`exited with ${started.exitCode ?? started.signalCode}`);
      }
      await sleep(50);
    }
    await stop("SIGKILL");
    throw failed(`did not answer on ${options.host}:${options.port}`);
  }

  async function stop(signal: NodeJS.Signals = options.stopSignal ?? "SIGTERM") {
    const running = child;
    child = null;
    // No pid: the program never ran, and no exit will come.
    if (!isRunning(running) || running.pid === undefined) return;
    const exited = once(running, "exit");
    running.kill(signal);
    await exited;
  }

  return {
    start,
    stop,
    get running() {
      return isRunning(child);
    },
  };
}
