// CPU time per process from /proc, so that each case reports the CPU it costs every process
// involved: ours by pid, the run's Postgres cluster and NATS server as process trees (see
// `cpuSnapshot`), the shared Redis summed over its processes.
import { readdirSync, readFileSync } from "node:fs";

const CLK_TCK = 100;

/** Clock ticks as milliseconds of CPU. */
export const ticksToMs = (ticks) => (ticks * 1000) / CLK_TCK;

/** Fields 3 on of /proc/<pid>/stat (after the command, which may hold spaces), or null when gone. */
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** utime + stime of one process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuTicks(pid) {
  const fields = statFields(pid);
  return fields ? Number(fields[11]) + Number(fields[12]) : 0;
}

/**
 * The CPU of a process and everything it started, alive or not: its own utime + stime, its
 * children's that it has reaped (cutime + cstime, fields 16 and 17), and those of its children
 * still running. A Postgres backend the pool closed has been reaped by the postmaster, so its CPU
 * stays in the postmaster's cutime/cstime instead of vanishing with it.
 */
export function treeTicks(pid) {
  const fields = statFields(pid);
  if (!fields) return 0;
  let ticks = Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
  for (const child of childPids(pid)) ticks += cpuTicks(child);
  return ticks;
}

/** The pids whose parent is `pid` (field 4 of /proc/<pid>/stat). */
function childPids(pid) {
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = statFields(entry);
    if (fields && Number(fields[1]) === pid) found.push(Number(entry));
  }
  return found;
}

/** The pids of every process whose command is `comm` (the shared Redis). */
function pidsNamed(comm) {
  const pids = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, "utf8").trim() === comm) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The parent of `pid`: a backend's is its cluster's postmaster. */
export function parentPid(pid) {
  const fields = statFields(pid);
  return fields ? Number(fields[1]) : null;
}

/**
 * The processes measured as trees rather than by name: `postgres` (the postmaster of the run's
 * cluster; other clusters on the machine are not ours) and `nats` (the run's NATS server).
 * Set by the platform once it runs.
 */
export const trees = new Map();

/**
 * A snapshot of CPU ticks per group: our children by pid, the run's Postgres cluster and NATS
 * server as trees, Redis (shared by everything on the machine) summed by name.
 */
export function cpuSnapshot(children) {
  const snapshot = {};
  for (const [name, child] of children) snapshot[name] = cpuTicks(child.pid);
  for (const [group, pid] of trees) snapshot[group] = treeTicks(pid);
  snapshot.redis = pidsNamed("redis-server").reduce((sum, pid) => sum + cpuTicks(pid), 0);
  snapshot.autocannon = cpuTicks(process.pid);
  return snapshot;
}

/** µs of CPU per unit (request, delivery) of each group that used any between two snapshots. */
export function cpuUsPer(before, after, units) {
  const cpu = {};
  for (const group of Object.keys(after)) {
    const ms = ticksToMs(after[group] - (before[group] ?? 0));
    if (ms > 0) cpu[group] = units > 0 ? (ms * 1000) / units : Number.NaN;
  }
  return cpu;
}
