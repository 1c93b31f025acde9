// The platform's request benchmark (`npm run bench`, after the vitest benches). It starts the
// platform once as `npm start` does (five processes, NODE_ENV=production, LOG_LEVEL=warn, a
// fresh database, its own Redis prefix and a NATS server of its own with production's users and
// permissions) plus two baseline servers and a webhook
// receiver (bench/servers.mjs), and measures every case side by side with autocannon, in
// shuffled rounds:
// - saturation: requests/s with SATURATION_CONNECTIONS keep-alive connections for ROUND_SECONDS
//   (C2: deliveries/s from the first import to the last arrival at the receiver);
// - fixed rate: p50/p99 latency at half of A2's saturation (calibrated once, the same rate for
//   every A and B case; C1 and C2 at EVENT_RATE), offered by FIXED_STREAMS autocannon instances
//   of one connection each, started evenly across a second (autocannon paces each connection per
//   second, so staggering them spreads the bursts); C2's latency runs from the API call's send to
//   the event's arrival at the receiver, on a clock both processes share;
// - CPU per request of every process involved, from /proc/<pid>/stat during the saturation run;
//   for a CPU target (B1's gateway against A2's), also with both cases at half the case's
//   saturation rate, where neither process's CPU per request is lowered by a higher load.
// On a server whose autovacuum is off (a CI machine's), the run's database is vacuumed and
// analyzed after each round, as production's autovacuum would keep it.
// Ratios are taken per round against the case's baseline in the same round; the table shows
// their median. Results also go to bench/results.json, and a line of them to bench/history.jsonl
// (kept in git: the table is printed against the latest earlier run; BENCH_HISTORY=off leaves it
// alone, for runs on a busy machine). Where the server has pg_stat_statements, each case's
// statements per unit go to results.json too (statements.mjs). Environment: BENCH_ROUNDS,
// BENCH_SECONDS, BENCH_CPU_PROF, BENCH_CASES, BENCH_HISTORY, BENCH_STATEMENTS, DATABASE_URL,
// REDIS_URL.
// The parts: platform.mjs starts what is measured, tenant.mjs and cases.mjs say what is loaded and
// how, load.mjs, hops.mjs and deliveries.mjs measure it (cpu.mjs the CPU), report.mjs prints it.
import { writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { defineCases, selectCases } from "./cases.mjs";
import { commitsDatabase } from "./commits.mjs";
import { codeUnderTest, compareWithHistory, loadAverage, printComparison, recordRun } from "./history.mjs";
import { fixedRate, load, saturation } from "./load.mjs";
import {
  adminUrl,
  autovacuumIsOn,
  cleanUp,
  databaseName,
  startPlatform,
  suffix,
  vacuumDatabase,
} from "./platform.mjs";
import { children } from "./processes.mjs";
import { printTable, summarize } from "./report.mjs";
import {
  FIXED_STREAMS,
  log,
  ROUND_SECONDS,
  ROUNDS,
  SATURATION_CONNECTIONS,
  setting,
  startedAt,
} from "./settings.mjs";
import { printStatements, statementsOf } from "./statements.mjs";
import { shuffle } from "./stats.mjs";
import { setUpTenant } from "./tenant.mjs";

async function main() {
  // Taken before anything starts: the code measured, and how busy the machine already was.
  const code = codeUnderTest();
  const loadAtStart = loadAverage();
  log(`database ${databaseName}, ${ROUNDS} rounds × ${ROUND_SECONDS} s per measurement`);
  const urls = await startPlatform();
  log("platform ready");
  const vacuumBetweenRounds = !(await autovacuumIsOn());
  statements = await statementsOf(adminUrl, databaseName);
  log(
    statements
      ? "pg_stat_statements: each case's statements per unit go to bench/results.json (BENCH_STATEMENTS=1 prints them)"
      : "no pg_stat_statements on the server: no statements per case (CONTRIBUTING.md)",
  );
  if (vacuumBetweenRounds)
    log("the server's autovacuum is off: the run's database is vacuumed after each round");

  const tenant = await setUpTenant(urls.gateway, urls.receiver, suffix);
  const planePoolsOnce = async () => {
    commits ??= commitsDatabase();
    return (await commits).pools;
  };
  const cases = selectCases(defineCases(urls, tenant, planePoolsOnce), setting("BENCH_CASES"));
  const byId = Object.fromEntries(cases.map((c) => [c.id, c]));
  // B2's key is used once for real; every later request is its replay.
  if (byId.B2) {
    const first = await fetch(byId.B2.target.url, {
      method: "POST",
      headers: byId.B2.target.headers,
      body: byId.B2.target.body,
    });
    if (first.status !== 200) throw new Error(`B2 setup: ${first.status} ${await first.text()}`);
  }
  // Every case answers 2xx before we measure it.
  for (const c of cases.filter((c) => c.target)) {
    const run = await load(c.target, { seconds: 1, connections: 4 });
    if (run.latencies.length === 0 || run.non2xx > 0) {
      throw new Error(`${c.id} does not answer 2xx (${run.non2xx} non-2xx, ${run.errors} errors)`);
    }
  }
  log("warmed up; calibrating the fixed rate on A2");
  const calibration = await saturation(byId.A2.target, children);
  const rate = Math.max(FIXED_STREAMS, Math.round(calibration.rps / 2));
  log(`A2 saturates at ${calibration.rps.toFixed(0)} req/s: fixed rate ${rate} req/s`);

  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const order = shuffle(cases.map((c) => c.id));
    const measured = {};
    for (const id of order) {
      const c = byId[id];
      const before = c.latencyOnly ? null : await statements?.snapshot();
      const sat = c.latencyOnly
        ? { rps: Number.NaN, non2xx: 0, errors: 0, cpuUsPerRequest: {} }
        : c.saturation
          ? await c.saturation(children)
          : await saturation(c.target, children);
      if (before) sat.statements = await statements.since(before, sat.units);
      const fixed = c.fixed ? await c.fixed() : await fixedRate(c.target, c.rate ?? rate);
      measured[id] = { ...sat, fixed };
      // A process's CPU per request falls as its load rises (more work per wake-up and per
      // write), so a case that saturates elsewhere at a lower rate pays more per request for the
      // same work. A CPU target is read once more with both cases offered one rate both hold.
      const vs = c.targets?.cpuOf ? byId[c.targets.cpuOf.vs] : undefined;
      if (vs?.target && c.target && Number.isFinite(sat.rps)) {
        const equal = Math.max(FIXED_STREAMS, Math.round(sat.rps / 2));
        measured[id].equalRate = {
          rate: equal,
          cpuUsPerRequest: (await fixedRate(c.target, equal, children)).cpuUsPerRequest,
          vsCpuUsPerRequest: (await fixedRate(vs.target, equal, children)).cpuUsPerRequest,
        };
      }
    }
    rounds.push({ order, measured });
    if (vacuumBetweenRounds) await vacuumDatabase();
    log(
      `round ${round + 1}/${ROUNDS}: ${order.map((id) => `${id} ${measured[id].rps.toFixed(0)}/s`).join(", ")}`,
    );
  }

  const summary = cases.map((c) => summarize(c, rounds));
  const machine = { cpus: cpus().length, loadAtStart, loadAtEnd: loadAverage() };
  printTable(summary, machine);
  const settings = { ROUNDS, ROUND_SECONDS, vacuumBetweenRounds };
  printComparison(compareWithHistory(summary, settings));
  if (setting("BENCH_STATEMENTS") === "1") printStatements(cases, rounds);
  if (setting("BENCH_HISTORY") !== "off") recordRun({ summary, settings, loadAtStart, code });
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: machine.cpus,
    load: { start: machine.loadAtStart, end: machine.loadAtEnd },
    settings: {
      ROUNDS,
      ROUND_SECONDS,
      SATURATION_CONNECTIONS,
      FIXED_STREAMS,
      fixedRate: rate,
      vacuumBetweenRounds,
    },
    calibration,
    cases: summary,
    rounds,
    durationSeconds: (Date.now() - startedAt) / 1000,
  };
  writeFileSync(new URL("results.json", import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  log(
    `wrote bench/results.json${setting("BENCH_HISTORY") === "off" ? "" : " and a line of bench/history.jsonl"} in ${results.durationSeconds.toFixed(0)} s`,
  );
}

// W1's database and pools (commits.mjs), made when it first runs and dropped with the run.
let commits = null;
// The reader of pg_stat_statements (statements.mjs), when the server has it.
let statements = null;

try {
  await main();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  await statements?.close().catch(() => {});
  await commits
    ?.then((database) => database.drop())
    .catch((error) => console.error("W1's database: failed to make or drop:", error));
  await cleanUp().catch((error) => console.error("cleanup failed:", error));
}
