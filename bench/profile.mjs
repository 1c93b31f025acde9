// Reads V8 CPU profiles (the .cpuprofile files BENCH_CPU_PROF writes under var/bench-prof/) and
// prints where the time went: self time by place of code (a package, Node's own internals, or a
// file of ours), then the functions with the most self time, each as a share of the samples.
//
//   node bench/profile.mjs var/bench-prof/<file>.cpuprofile [--top N] [--after SECONDS]
//
// --after leaves out the first SECONDS of the profile: a process's start-up (compiling modules and
// schemas) is in every profile, and is not what a case measures.
import { readFileSync } from "node:fs";

/** Where a frame's code lives: `pkg:<name>` for a dependency, `node:` internals, or our file. */
export function placeOf(url) {
  if (url === "") return "(native, GC, idle)";
  if (url.startsWith("node:")) return "node:internal";
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return `pkg:${pkg[1]}`;
  const ours = url.match(/\/((?:services|packages)\/[^/]+)\/(?:dist|src)\/(.+)$/);
  return ours ? `${ours[1]}/${ours[2]}` : url.replace(/^file:\/\//, "");
}

/** Self time per node id, from the profile's samples taken `afterUs` or later into it. */
function selfTimes(profile, afterUs) {
  const self = new Map();
  let at = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    at += delta;
    if (at >= afterUs) self.set(id, (self.get(id) ?? 0) + delta);
  });
  return self;
}

/** The profile summarized: total µs, and self µs by place and by function, largest first. */
export function summarizeProfile(profile, { afterUs = 0 } = {}) {
  const self = selfTimes(profile, afterUs);
  const byPlace = new Map();
  const byFunction = new Map();
  let total = 0;
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const { functionName, url, lineNumber } = node.callFrame;
    const name = functionName || "(anonymous)";
    // Idle time is not work: it is left out of the shares.
    if (name === "(idle)") continue;
    total += us;
    const place = placeOf(url);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
    const key = `${name} ${place}${url ? `:${lineNumber + 1}` : ""}`;
    byFunction.set(key, (byFunction.get(key) ?? 0) + us);
  }
  const sorted = (map) => [...map.entries()].sort((a, b) => b[1] - a[1]);
  return { totalUs: total, byPlace: sorted(byPlace), byFunction: sorted(byFunction) };
}

function print(file, top, afterUs) {
  const summary = summarizeProfile(JSON.parse(readFileSync(file, "utf8")), { afterUs });
  const share = (us) => `${((100 * us) / summary.totalUs).toFixed(1).padStart(5)} %`;
  console.log(`${file}: ${(summary.totalUs / 1000).toFixed(0)} ms of CPU sampled (idle left out)`);
  console.log("\nself time by place");
  for (const [place, us] of summary.byPlace.slice(0, top)) console.log(`  ${share(us)}  ${place}`);
  console.log("\nself time by function");
  for (const [fn, us] of summary.byFunction.slice(0, top)) console.log(`  ${share(us)}  ${fn}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const topAt = args.indexOf("--top");
  const top = topAt >= 0 ? Number(args[topAt + 1]) : 25;
  const afterAt = args.indexOf("--after");
  const afterUs = afterAt >= 0 ? Number(args[afterAt + 1]) * 1e6 : 0;
  for (const file of args.filter((a) => a.endsWith(".cpuprofile"))) print(file, top, afterUs);
}
