// CPU time per process from /proc, so that each case reports the CPU it costs every process
// involved (ours by pid, the shared servers summed over their processes).
import { readdirSync, readFileSync } from "node:fs";

const CLK_TCK = 100;

/** Clock ticks as milliseconds of CPU. */
export const ticksToMs = (ticks) => (ticks * 1000) / CLK_TCK;

/** utime + stime of one process, in clock ticks (fields 14 and 15 of /proc/<pid>/stat). */
export function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return 0;
  }
}

/** The pids of every process whose command is `comm` (postgres backends, redis, nats). */
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

/** A snapshot of CPU ticks per group: our children by name, and the shared servers summed. */
export function cpuSnapshot(children) {
  const snapshot = {};
  for (const [name, child] of children) snapshot[name] = cpuTicks(child.pid);
  for (const [group, comm] of [
    ["postgres", "postgres"],
    ["redis", "redis-server"],
    ["nats", "nats-server"],
  ]) {
    snapshot[group] = pidsNamed(comm).reduce((sum, pid) => sum + cpuTicks(pid), 0);
  }
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
