// W1: event-emitting commits per second from all four planes at once. Each plane's schema gets
// SATURATION_CONNECTIONS / 4 connections of its own role, each committing, one after the other,
// transactions that write one event through kit's `writeOutboxEvent` (what every emitting write
// of a plane does besides its change). Every plane's commits run side by side, so the figure is
// the ceiling that anything shared by all event-emitting commits (a database-wide lock taken at
// commit) puts on them. W1n, its baseline, is the same transaction written as it was while every
// emitting commit announced its row with NOTIFY (one statement, the row and `pg_notify`).
//
//   node bench/commits.mjs   W1 against W1n alone: a fresh database (DATABASE_URL's server), the
//                            migrations, no platform; BENCH_ROUNDS shuffled rounds of BENCH_SECONDS.
import { randomUUID } from "node:crypto";
import { cpus } from "node:os";
import {
  createPool,
  eventEnvelope,
  eventMessage,
  OUTBOX_COLUMNS,
  outboxValues,
  schemaRoleUrl,
  withDefaultUser,
  withTransaction,
  writeOutboxEvent,
} from "@evalp/kit";
import pg from "pg";
import { cpuSnapshot, cpuUsPer, parentPid, trees } from "./cpu.mjs";
import { loadAverage } from "./history.mjs";
import { machineLine } from "./report.mjs";
import { ROUND_SECONDS, ROUNDS, SATURATION_CONNECTIONS, setting } from "./settings.mjs";
import { median, shuffle, spread } from "./stats.mjs";

const PLANES = ["control", "platform", "interview", "webhooks"];
const PER_PLANE = Math.max(1, Math.round(SATURATION_CONNECTIONS / PLANES.length));

/** Pools of each plane's role on the run's database, made once and kept for every round. */
export function planePools(databaseUrl) {
  return PLANES.map((plane) =>
    createPool({ databaseUrl: schemaRoleUrl(databaseUrl, plane), schema: plane, max: PER_PLANE }),
  );
}

/** One event-emitting commit as the platform makes it now. */
const commitEvent = (environmentId) => (pool) =>
  withTransaction(pool, (tx) =>
    writeOutboxEvent(tx, { type: "quota.updated", environmentId, data: { bench: true } }),
  );

/** The same commit as it was made while every one announced its row with NOTIFY (W1n). */
const commitEventWithNotify = (environmentId) => (pool) =>
  withTransaction(pool, async (tx) => {
    const values = outboxValues(
      eventMessage(eventEnvelope({ type: "quota.updated", environmentId, data: { bench: true } })),
    );
    await tx.query(
      `WITH written AS (
         INSERT INTO outbox (${OUTBOX_COLUMNS})
         VALUES ($1, $2, $3, $4, $5, COALESCE($6::timestamptz, date_trunc('milliseconds', clock_timestamp())), $7)
         RETURNING 1
       )
       SELECT pg_notify('evalp_outbox', current_schema()) FROM written`,
      values,
    );
  });

/** Commits a second over ROUND_SECONDS, and the CPU each cost every process. */
export async function commitSaturation(pools, children, { notify = false } = {}) {
  // An environment of no tenant: no endpoint subscribes to its events.
  const environmentId = randomUUID();
  const commit = (notify ? commitEventWithNotify : commitEvent)(environmentId);
  let commits = 0;
  let errors = 0;
  const before = cpuSnapshot(children);
  const started = performance.now();
  const deadline = started + ROUND_SECONDS * 1000;
  const worker = async (pool) => {
    while (performance.now() < deadline) {
      try {
        await commit(pool);
        commits += 1;
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(pools.flatMap((pool) => Array.from({ length: PER_PLANE }, () => worker(pool))));
  const seconds = (performance.now() - started) / 1000;
  const after = cpuSnapshot(children);
  return {
    rps: commits / seconds,
    units: commits,
    non2xx: 0,
    errors,
    cpuUsPerRequest: cpuUsPer(before, after, commits),
  };
}

/**
 * A database of W1's own on DATABASE_URL's server, with every plane's migrations, and its pools.
 * Never the platform's: no process there publishes these rows as it commits them, so the
 * platform's relays would sweep and publish tens of thousands of them seconds later, in the
 * middle of whichever case runs next.
 */
export async function commitsDatabase() {
  const { migrateAll } = await import("../scripts/migrate.mjs");
  const base = new URL(withDefaultUser(setting("DATABASE_URL") ?? "postgres://127.0.0.1:5432/evalp"));
  const name = `evalp_bench_commits_${Date.now().toString(36)}`;
  const admin = new pg.Client({ connectionString: new URL("/postgres", base).toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const { rows } = await admin.query("SELECT pg_backend_pid() AS pid");
  let pools = [];
  const drop = async () => {
    await Promise.all(pools.map((pool) => pool.end()));
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  };
  try {
    const url = new URL(`/${name}`, base).toString();
    await migrateAll(url);
    pools = planePools(url);
    return { pools, postmaster: parentPid(rows[0].pid), drop };
  } catch (error) {
    await drop();
    throw error;
  }
}

/** W1 against W1n on a database of their own, without the platform. */
async function main() {
  const loadAtStart = loadAverage();
  const database = await commitsDatabase();
  if (database.postmaster !== null) trees.set("postgres", database.postmaster);
  const { pools } = database;
  try {
    const rounds = [];
    for (let round = 0; round < ROUNDS; round++) {
      const measured = {};
      for (const id of shuffle(["W1", "W1n"])) {
        measured[id] = await commitSaturation(pools, new Map(), { notify: id === "W1n" });
      }
      rounds.push(measured);
      console.error(
        `round ${round + 1}/${ROUNDS}: W1 ${measured.W1.rps.toFixed(0)}/s, W1n ${measured.W1n.rps.toFixed(0)}/s`,
      );
    }
    for (const id of ["W1n", "W1"]) {
      const rps = rounds.map((r) => r[id].rps);
      const pgUs = median(rounds.map((r) => r[id].cpuUsPerRequest.postgres ?? Number.NaN));
      const benchUs = median(rounds.map((r) => r[id].cpuUsPerRequest.autocannon ?? Number.NaN));
      console.log(
        `${id}: ${median(rps).toFixed(0)} commits/s ±${(spread(rps) * 100).toFixed(0)}%, ` +
          `CPU per commit: postgres ${pgUs.toFixed(0)} µs, writer ${benchUs.toFixed(0)} µs`,
      );
    }
    const ratios = rounds.map((r) => r.W1.rps / r.W1n.rps);
    console.log(
      `W1/W1n: ${median(ratios).toFixed(2)} ±${(spread(ratios) * 100).toFixed(0)}% (per round: ${ratios.map((r) => r.toFixed(2)).join(", ")})`,
    );
    console.log(machineLine({ cpus: cpus().length, loadAtStart, loadAtEnd: loadAverage() }));
  } finally {
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
