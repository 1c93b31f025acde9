// W1: event-emitting commits per second from all four planes at once. Each plane's schema gets
// SATURATION_CONNECTIONS / 4 connections of its own role, each committing, one after the other,
// transactions that write one event through kit's `writeOutboxEvent` (what every emitting write
// of a plane does besides its change). Every plane's commits run side by side, so the figure is
// the ceiling that anything shared by all event-emitting commits (a database-wide lock taken at
// commit) puts on them.
import { randomUUID } from "node:crypto";
import { createPool, schemaRoleUrl, withTransaction, writeOutboxEvent } from "@evalp/kit";
import { cpuSnapshot, cpuUsPer } from "./cpu.mjs";
import { ROUND_SECONDS, SATURATION_CONNECTIONS } from "./settings.mjs";

const PLANES = ["control", "platform", "interview", "webhooks"];
const PER_PLANE = Math.max(1, Math.round(SATURATION_CONNECTIONS / PLANES.length));

/** Pools of each plane's role on the run's database, made once and kept for every round. */
export function planePools(databaseUrl) {
  return PLANES.map((plane) =>
    createPool({ databaseUrl: schemaRoleUrl(databaseUrl, plane), schema: plane, max: PER_PLANE }),
  );
}

/** Commits a second over ROUND_SECONDS, and the CPU each cost every process. */
export async function commitSaturation(pools, children) {
  // An environment of no tenant: no endpoint subscribes to its events.
  const environmentId = randomUUID();
  let commits = 0;
  let errors = 0;
  const before = cpuSnapshot(children);
  const started = performance.now();
  const deadline = started + ROUND_SECONDS * 1000;
  const worker = async (pool) => {
    while (performance.now() < deadline) {
      try {
        await withTransaction(pool, (tx) =>
          writeOutboxEvent(tx, { type: "quota.updated", environmentId, data: { bench: true } }),
        );
        commits += 1;
      } catch {
        errors += 1;
      }
    }
  };
  await Promise.all(pools.flatMap((pool) => Array.from({ length: PER_PLANE }, () => worker(pool))));
  const seconds = (performance.now() - started) / 1000;
  const after = cpuSnapshot(children);
  return { rps: commits / seconds, non2xx: 0, errors, cpuUsPerRequest: cpuUsPer(before, after, commits) };
}
