// The report: each case's medians over the rounds, its ratios to its baseline taken per round,
// its targets met or missed, and the table printed on stdout.
import { ROUNDS } from "./settings.mjs";
import { median, spread } from "./stats.mjs";

/** One case's line of the results: medians over the rounds, ratios to its baseline, targets. */
export function summarize(c, rounds) {
  const of = (round, id) => round.measured[id];
  const rps = median(rounds.map((r) => of(r, c.id).rps));
  // How far apart the rounds were: a figure whose rounds disagree by more than the change it
  // is read for says nothing about that change.
  const rpsSpread = spread(rounds.map((r) => of(r, c.id).rps));
  const p50 = median(rounds.map((r) => of(r, c.id).fixed.p50));
  const p99 = median(rounds.map((r) => of(r, c.id).fixed.p99));
  const cpu = {};
  for (const group of Object.keys(of(rounds[0], c.id).cpuUsPerRequest)) {
    cpu[group] = median(rounds.map((r) => of(r, c.id).cpuUsPerRequest[group] ?? 0));
  }
  const entry = {
    id: c.id,
    what: c.what,
    rps,
    rpsSpread,
    p50Ms: p50,
    p99Ms: p99,
    unit: c.unit ?? "requests",
    offeredRate: of(rounds[0], c.id).fixed.offered,
    achievedRate: median(rounds.map((r) => of(r, c.id).fixed.achieved)),
    non2xx: rounds.reduce((sum, r) => sum + of(r, c.id).non2xx + of(r, c.id).fixed.non2xx, 0),
    errors: rounds.reduce((sum, r) => sum + of(r, c.id).errors + of(r, c.id).fixed.errors, 0),
    cpuUsPerRequest: cpu,
    baseline: c.baseline ?? null,
  };
  if (c.baseline) {
    const ratios = rounds.map((r) => of(r, c.id).rps / of(r, c.baseline).rps);
    entry.throughputRatio = median(ratios);
    entry.ratioSpread = spread(ratios);
    entry.p99DeltaMs = median(rounds.map((r) => of(r, c.id).fixed.p99 - of(r, c.baseline).fixed.p99));
  }
  if (c.targets) {
    const checks = [];
    const t = c.targets;
    if (t.throughputRatio !== undefined) {
      checks.push({
        target: `${c.id}/${c.baseline} ≥ ${t.throughputRatio}`,
        met: entry.throughputRatio >= t.throughputRatio,
      });
    }
    if (t.p99OverBaselineMs !== undefined) {
      checks.push({
        target: `p99 ≤ ${c.baseline} p99 + ${t.p99OverBaselineMs} ms`,
        met: entry.p99DeltaMs <= t.p99OverBaselineMs,
      });
    }
    if (t.cpuOf !== undefined) {
      // One process's CPU per request against its CPU per request of another case, taken per round.
      const { process: name, vs, maxRatio } = t.cpuOf;
      entry.cpuRatio = {
        process: name,
        vs,
        ratio: median(
          rounds.map(
            (r) => (of(r, c.id).cpuUsPerRequest[name] ?? 0) / (of(r, vs).cpuUsPerRequest[name] ?? 0),
          ),
        ),
      };
      // The same processes at one offered rate (run.mjs): what is left of the gap when the
      // case's lower saturation rate no longer raises its CPU per request.
      const equal = rounds.map((r) => of(r, c.id).equalRate).filter(Boolean);
      if (equal.length > 0) {
        entry.cpuRatio.atEqualRate = {
          rate: median(equal.map((e) => e.rate)),
          ratio: median(equal.map((e) => (e.cpuUsPerRequest[name] ?? 0) / (e.vsCpuUsPerRequest[name] ?? 0))),
        };
      }
      const atEqual = entry.cpuRatio.atEqualRate;
      const equalText = atEqual ? `; ${atEqual.ratio.toFixed(2)} × with both at ${atEqual.rate}/s` : "";
      checks.push({
        target: `${name} CPU ≤ ${maxRatio} × ${vs}'s (${entry.cpuRatio.ratio.toFixed(2)} ×${equalText})`,
        met: entry.cpuRatio.ratio <= maxRatio,
      });
    }
    if (t.minRps !== undefined) checks.push({ target: `≥ ${t.minRps}/s`, met: rps >= t.minRps });
    if (t.p50MaxMs !== undefined) checks.push({ target: `p50 ≤ ${t.p50MaxMs} ms`, met: p50 <= t.p50MaxMs });
    if (t.p99MaxMs !== undefined) checks.push({ target: `p99 ≤ ${t.p99MaxMs} ms`, met: p99 <= t.p99MaxMs });
    entry.targets = checks;
  }
  return entry;
}

/** The table on stdout, with the legend, the machine's load and each case's description under it. */
export function printTable(summary, machine) {
  const fmt = (v, digits = 2) => (Number.isFinite(v) ? v.toFixed(digits) : "—");
  const header = [
    "case",
    "per s",
    "±",
    "fixed rate/s",
    "p50 ms",
    "p99 ms",
    "vs",
    "ratio",
    "Δp99 ms",
    "CPU µs per (top)",
    "target",
  ];
  const rows = summary.map((s) => {
    const cpu = Object.entries(s.cpuUsPerRequest)
      .filter(([group]) => group !== "autocannon")
      .sort((a, b) => b[1] - a[1]);
    const total = cpu.reduce((sum, [, us]) => sum + us, 0);
    const top = cpu
      .slice(0, 3)
      .map(([group, us]) => `${group} ${us.toFixed(0)}`)
      .join(", ");
    const targets = (s.targets ?? []).map((t) => `${t.met ? "MET" : "MISSED"} ${t.target}`).join("; ");
    return [
      `${s.id}${s.non2xx + s.errors > 0 ? "*" : ""}`,
      fmt(s.rps, 0),
      Number.isFinite(s.rpsSpread) ? `${(s.rpsSpread * 100).toFixed(0)}%` : "—",
      Number.isFinite(s.offeredRate) ? `${s.offeredRate} (${fmt(s.achievedRate, 0)})` : "—",
      fmt(s.p50Ms),
      fmt(s.p99Ms),
      s.baseline ?? "",
      s.baseline
        ? `${fmt(s.throughputRatio)}${Number.isFinite(s.ratioSpread) ? ` ±${(s.ratioSpread * 100).toFixed(0)}%` : ""}`
        : "",
      s.baseline ? fmt(s.p99DeltaMs) : "",
      `${total.toFixed(0)} = ${top}`,
      targets,
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((cell, i) => cell.padEnd(widths[i])).join(" │ ");
  console.log(`\n${line(header)}\n${widths.map((w) => "─".repeat(w)).join("─┼─")}`);
  for (const row of rows) console.log(line(row));
  console.log(
    [
      `\nMedians over ${ROUNDS} shuffled rounds. per s: requests (C: deliveries, W: commits) per second at saturation;`,
      "±: spread of the rounds, (max − min) / median, of per s and of the ratio;",
      "fixed rate/s: offered (achieved) rate of the latency run; ratio: case/baseline per s in the same round;",
      "Δp99: case p99 − baseline p99; CPU: µs of each process per request (C: per delivery) at saturation.",
    ].join("\n"),
  );
  if (machine) console.log(machineLine(machine));
  for (const s of summary) console.log(`  ${s.id}: ${s.what}`);
  if (summary.some((s) => s.non2xx + s.errors > 0)) console.log("  * some responses were not 2xx or failed");
}

/**
 * The machine's load around the run: the 1-minute load average at its start and end against the
 * cores. At or past one runnable process per core, other work competed with the bench's.
 */
export function machineLine({ cpus, loadAtStart, loadAtEnd }) {
  const busiest = Math.max(loadAtStart, loadAtEnd);
  const verdict =
    busiest >= cpus
      ? "LOADED: other work competed for the cores, compare only with runs made side by side"
      : "quiet enough";
  return `Load average ${loadAtStart} at start, ${loadAtEnd} at end, on ${cpus} cores: ${verdict}.`;
}
