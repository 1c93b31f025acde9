// Two builds measured by turns: `node bench/ab.mjs <ref> [CASE …]` runs the bench of the commit
// <ref> (checked out and built once, in a worktree under var/bench-ab/) and of this tree (built
// first, as it is now), one after the other, PAIRS times, the order swapped every pair, each run
// one round of the cases named (all by default) with its own platform. On a machine whose speed
// drifts by more than the change measured (a shared VM's does, by tens of percent from one minute
// to the next), two runs made one after the other still see nearly the same machine: so each
// figure is compared within its pair, this tree's against <ref>'s, and the table shows the median
// of those per-pair changes, with their spread. A change smaller than the spread is not one this
// run can see.
//
//   node bench/ab.mjs HEAD~3 A2 H1      A2 (with A1, its baseline) and H1 (with H0), 4 pairs
//   BENCH_AB_PAIRS=6 BENCH_SECONDS=5 node bench/ab.mjs main
//
// It writes no history line (BENCH_HISTORY=off for every run) and leaves the worktree in place for
// the next comparison with the same commit (`git worktree remove` it when done).
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT, setting } from "./settings.mjs";
import { median, spread } from "./stats.mjs";

const PAIRS = Number(setting("BENCH_AB_PAIRS") ?? 4);

const git = (...args) => execFileSync("git", args, { cwd: ROOT, encoding: "utf8" }).trim();

/** A worktree of `ref`, installed and built (once: a later comparison with it reuses it). */
function prepareBase(ref) {
  const commit = git("rev-parse", "--verify", `${ref}^{commit}`);
  const dir = join(ROOT, "var", "bench-ab", commit.slice(0, 12));
  const run = (command, args) => execFileSync(command, args, { cwd: dir, stdio: "inherit" });
  if (!existsSync(join(dir, ".git"))) git("worktree", "add", "--detach", dir, commit);
  if (!existsSync(join(dir, ".ab-built"))) {
    console.error(`[ab] installing and building ${commit.slice(0, 12)} in ${dir}`);
    run("npm", ["ci", "--no-audit", "--no-fund"]);
    run("npx", ["turbo", "run", "build", "--output-logs=errors-only"]);
    writeFileSync(join(dir, ".ab-built"), `${commit}\n`);
  }
  return { label: commit.slice(0, 12), dir };
}

/** One run of the bench in `tree`: its cases' figures, from its bench/results.json. */
async function benchIn(tree, cases) {
  const env = { ...process.env, BENCH_ROUNDS: "1", BENCH_HISTORY: "off" };
  if (cases.length > 0) env.BENCH_CASES = cases.join(",");
  const child = spawn(process.execPath, ["bench/run.mjs"], {
    cwd: tree.dir,
    env,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  child.stderr.on("data", (chunk) => {
    errors += chunk;
  });
  const code = await new Promise((resolve) => child.on("exit", resolve));
  if (code !== 0) throw new Error(`the bench of ${tree.label} failed (${code}):\n${errors.slice(-2000)}`);
  const results = JSON.parse(readFileSync(join(tree.dir, "bench", "results.json"), "utf8"));
  return Object.fromEntries(
    results.cases.map((c) => [
      c.id,
      {
        rps: c.rps,
        ratio: c.throughputRatio,
        cpu:
          Object.values(c.cpuUsPerRequest).reduce((sum, us) => sum + us, 0) -
          (c.cpuUsPerRequest.autocannon ?? 0),
        // A CPU target's ratio (B1's gateway against A2's), at saturation and at one rate.
        cpuRatio: c.cpuRatio?.ratio,
        cpuRatioAtEqualRate: c.cpuRatio?.atEqualRate?.ratio,
      },
    ]),
  );
}

/** The figures compared, by their names in a case's line, as the table prints them. */
const NAMES = {
  rps: "per s",
  ratio: "ratio to its baseline",
  cpu: "CPU µs per unit, all processes",
  cpuRatio: "CPU target's ratio",
  cpuRatioAtEqualRate: "the same at one rate",
};

/**
 * Per case and figure, the medians of each build and of the per-pair changes (this tree ÷ base),
 * over the pairs where both builds measured it.
 */
export function comparePairs(pairs) {
  const ids = Object.keys(pairs[0].head).filter((id) => pairs.every((p) => p.base[id] && p.head[id]));
  const rows = [];
  for (const id of ids) {
    for (const figure of Object.keys(NAMES)) {
      const both = pairs
        .map((p) => [p.base[id][figure], p.head[id][figure]])
        .filter(([a, b]) => Number.isFinite(a) && Number.isFinite(b) && a > 0);
      if (both.length === 0) continue;
      const changes = both.map(([a, b]) => b / a);
      rows.push({
        id,
        figure,
        base: median(both.map(([a]) => a)),
        head: median(both.map(([, b]) => b)),
        change: median(changes),
        spread: spread(changes),
      });
    }
  }
  return rows;
}

async function main() {
  const [ref, ...cases] = process.argv.slice(2);
  if (!ref) throw new Error("usage: node bench/ab.mjs <ref> [CASE …]");
  const base = prepareBase(ref);
  const head = { label: "this tree", dir: ROOT };
  // This tree as it is now, not as it was last built (as `npm run bench` builds before it runs).
  execFileSync("npx", ["turbo", "run", "build", "--output-logs=errors-only"], {
    cwd: ROOT,
    stdio: "inherit",
  });
  const pairs = [];
  for (let i = 0; i < PAIRS; i++) {
    // Swapped every pair, so that neither build is always the one measured on a warmer machine.
    const order = i % 2 === 0 ? [base, head] : [head, base];
    const measured = new Map();
    for (const tree of order) {
      console.error(`[ab] pair ${i + 1}/${PAIRS}: ${tree.label}`);
      measured.set(tree, await benchIn(tree, cases));
    }
    pairs.push({ base: measured.get(base), head: measured.get(head) });
  }
  console.log(`\n${base.label} (base) against this tree, ${PAIRS} pairs of one round each`);
  console.log(
    "case │ figure                         │ base       │ this tree  │ change (median of pairs) │ ± spread",
  );
  for (const row of comparePairs(pairs)) {
    const digits = row.figure.toLowerCase().includes("ratio") ? 3 : 0;
    console.log(
      [
        row.id.padEnd(4),
        NAMES[row.figure].padEnd(30),
        row.base.toFixed(digits).padStart(10),
        row.head.toFixed(digits).padStart(10),
        `${((row.change - 1) * 100).toFixed(1).padStart(6)} %`.padEnd(24),
        Number.isFinite(row.spread) ? `${(row.spread * 100).toFixed(0)} %` : "—",
      ].join(" │ "),
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
