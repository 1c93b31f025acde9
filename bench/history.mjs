// The bench's history: every run of bench/run.mjs appends one line to bench/history.jsonl (kept in
// git), so that a change's table can be read against the runs before it and a regression shows.
// A line holds what the table shows, not the rounds (those stay in bench/results.json): the commit
// measured (and whether its tree had uncommitted changes), Node, the machine's load when the run
// began and ended (a run on a busy machine is not comparable), the settings and each case's figures.
//
//   node bench/history.mjs [CASE ...]   prints each case's figures run by run, oldest first
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { ROOT } from "./settings.mjs";

const FILE = new URL("history.jsonl", import.meta.url);

/** A ratio that moved against its target by more than this share of itself is flagged. */
const REGRESSION_SHARE = 0.1;

function git(...args) {
  try {
    return execFileSync("git", args, {
      cwd: ROOT,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return null;
  }
}

/** What identifies the code measured: its commit, and whether tracked files differed from it. */
export function codeUnderTest() {
  const commit = git("rev-parse", "--short=12", "HEAD");
  const dirty = commit !== null && git("status", "--porcelain", "--untracked-files=no") !== "";
  return { commit, dirty };
}

export const loadAverage = () => Number(loadavg()[0].toFixed(2));

/** The figures of one case that the history keeps (the same names as the summary's). */
function figuresOf(entry) {
  const round = (v, digits) => (Number.isFinite(v) ? Number(v.toFixed(digits)) : null);
  return {
    perSecond: round(entry.rps, 0),
    p50Ms: round(entry.p50Ms, 2),
    p99Ms: round(entry.p99Ms, 2),
    ...(entry.baseline ? { vs: entry.baseline, ratio: round(entry.throughputRatio, 3) } : {}),
    ...(entry.baseline ? { p99DeltaMs: round(entry.p99DeltaMs, 2) } : {}),
    ...(entry.cpuRatio ? { cpuRatio: round(entry.cpuRatio.ratio, 3) } : {}),
    ...(entry.cpuRatio?.atEqualRate
      ? {
          cpuRatioAtEqualRate: round(entry.cpuRatio.atEqualRate.ratio, 3),
          equalRate: entry.cpuRatio.atEqualRate.rate,
        }
      : {}),
    cpuUs: Object.fromEntries(
      Object.entries(entry.cpuUsPerRequest)
        .filter(([group]) => group !== "autocannon")
        .map(([group, us]) => [group, round(us, 0)]),
    ),
    ...(entry.targets ? { missed: entry.targets.filter((t) => !t.met).map((t) => t.target) } : {}),
  };
}

/** Every run recorded so far, oldest first. */
export function readHistory() {
  if (!existsSync(FILE)) return [];
  return readFileSync(FILE, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line));
}

/** Appends this run to the history. */
export function recordRun({ summary, settings, loadAtStart, code }) {
  const line = {
    date: new Date().toISOString(),
    ...code,
    node: process.version,
    load: { start: loadAtStart, end: loadAverage() },
    settings: {
      rounds: settings.ROUNDS,
      seconds: settings.ROUND_SECONDS,
      // Only said when it happened: earlier lines never had it.
      ...(settings.vacuumBetweenRounds ? { vacuumBetweenRounds: true } : {}),
    },
    cases: Object.fromEntries(summary.map((entry) => [entry.id, figuresOf(entry)])),
  };
  appendFileSync(FILE, `${JSON.stringify(line)}\n`);
  return line;
}

/**
 * Each case of this run against its latest earlier run with the same settings: the figure its
 * target is about (its ratio to its baseline, or its rate), the earlier value and whether it fell
 * by more than REGRESSION_SHARE. A target that was met and is now missed is a regression too.
 */
export function compareWithHistory(summary, settings, history = readHistory()) {
  const comparable = history.filter(
    (run) => run.settings.rounds === settings.ROUNDS && run.settings.seconds === settings.ROUND_SECONDS,
  );
  return summary.map((entry) => {
    const earlier = comparable.findLast((run) => run.cases[entry.id] !== undefined);
    if (!earlier) return { id: entry.id, earlier: null };
    const before = earlier.cases[entry.id];
    const now = figuresOf(entry);
    const key = now.ratio !== undefined ? "ratio" : "perSecond";
    const fell = before[key] > 0 && (before[key] - now[key]) / before[key] > REGRESSION_SHARE;
    const newlyMissed = (now.missed ?? []).filter((t) => !(before.missed ?? []).includes(t));
    return {
      id: entry.id,
      earlier: { commit: earlier.commit, date: earlier.date, value: before[key] },
      key,
      value: now[key],
      regressed: fell || newlyMissed.length > 0,
      newlyMissed,
    };
  });
}

/** The comparison under the table, a line a case. */
export function printComparison(comparison) {
  const known = comparison.filter((c) => c.earlier);
  if (known.length === 0) {
    console.log("\nNo earlier run with the same settings in bench/history.jsonl to compare with.");
    return;
  }
  console.log("\nAgainst the latest earlier run with the same settings (bench/history.jsonl):");
  for (const c of known) {
    const flag = c.regressed ? "  REGRESSED" : "";
    const missed = c.newlyMissed.length > 0 ? ` (now missed: ${c.newlyMissed.join("; ")})` : "";
    console.log(
      `  ${c.id}: ${c.key} ${c.earlier.value} → ${c.value} (was ${c.earlier.commit} of ${c.earlier.date.slice(0, 10)})${flag}${missed}`,
    );
  }
}

/** `node bench/history.mjs [CASE ...]`: the recorded runs of some cases (all by default). */
function printHistory(ids) {
  const history = readHistory();
  const all = [...new Set(history.flatMap((run) => Object.keys(run.cases)))];
  for (const id of ids.length > 0 ? ids : all) {
    console.log(`\n${id}`);
    for (const run of history.filter((r) => r.cases[id])) {
      const c = run.cases[id];
      const ratio = c.ratio !== undefined ? ` ${c.ratio}×${c.vs}` : "";
      const equal =
        c.cpuRatioAtEqualRate !== undefined ? ` (${c.cpuRatioAtEqualRate}× at ${c.equalRate}/s)` : "";
      const cpu = c.cpuRatio !== undefined ? ` cpu ${c.cpuRatio}×${equal}` : "";
      console.log(
        `  ${run.date.slice(0, 16)} ${run.commit}${run.dirty ? "+" : ""} load ${run.load.start}/${run.load.end}` +
          ` ${run.settings.rounds}×${run.settings.seconds}s: ${c.perSecond}/s${ratio}${cpu} p50 ${c.p50Ms} p99 ${c.p99Ms}` +
          `${c.missed?.length ? ` missed ${c.missed.length}` : ""}`,
      );
    }
  }
}

if (import.meta.url === `file://${process.argv[1]}`) printHistory(process.argv.slice(2));
