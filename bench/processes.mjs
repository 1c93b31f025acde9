// The processes the bench starts (the platform's, the baselines', the receiver's): started with
// their stderr relayed, known by name (for their CPU), and stopped together at the end; one that
// exits on its own fails the bench.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { ROOT, setting } from "./settings.mjs";

/** The running processes by name. */
export const children = new Map();
let stopping = false;

/**
 * BENCH_CPU_PROF=1 writes a V8 CPU profile of the gateway and control (or of the processes
 * BENCH_CPU_PROF_PROCESSES names, e.g. `platform,webhooks`) to var/bench-prof/ at exit.
 */
const PROFILED =
  setting("BENCH_CPU_PROF") === "1"
    ? (setting("BENCH_CPU_PROF_PROCESSES")?.split(",") ?? ["gateway", "control"])
    : [];

export function startProcess(name, args, env) {
  const flags = PROFILED.includes(name)
    ? ["--cpu-prof", "--cpu-prof-dir=var/bench-prof", `--cpu-prof-name=${name}.cpuprofile`]
    : [];
  const child = spawn(process.execPath, [...flags, ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.set(name, child);
  child.stderr.on("data", (chunk) => process.stderr.write(`${name}: ${chunk}`));
  // Nobody reads a process's stdout (its logs, at LOG_LEVEL=warn): drained, so that a burst of
  // warnings cannot fill the pipe and stall the process's event loop on its next log line.
  child.stdout.resume();
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`${name} exited (${signal ?? code}) during the bench`);
      process.exitCode = 1;
    }
  });
  return child;
}

/** Polls `url` until it answers 2xx (60 s at most: five processes start at once on a busy machine). */
export async function waitFor(url, what) {
  for (let attempt = 0; attempt < 600; attempt++) {
    const ok = await fetch(url)
      .then((r) => r.ok)
      .catch(() => false);
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`${what} did not become ready at ${url}`);
}

/** SIGTERM to every process still running, SIGKILL to those that have not exited 12 s later. */
export async function stopAll() {
  stopping = true;
  const exits = [...children.values()]
    .filter((child) => child.exitCode === null)
    .map((child) => {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      return Promise.race([exited, sleep(12_000)]).then(() => {
        if (child.exitCode === null) child.kill("SIGKILL");
      });
    });
  await Promise.all(exits);
}
