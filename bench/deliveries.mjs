// C2 measured at the receiver: deliveries a second at saturation, and each event's latency from
// its API call's send to its arrival.
import { setTimeout as sleep } from "node:timers/promises";
import { cpuSnapshot, cpuUsPer } from "./cpu.mjs";
import { fixedRate, load } from "./load.mjs";
import { now } from "./requests.mjs";
import { ROUND_SECONDS, SATURATION_CONNECTIONS } from "./settings.mjs";
import { percentile } from "./stats.mjs";

async function receiverStats(receiver, prefix, arrivals = false) {
  const query = new URLSearchParams({ prefix, arrivals: arrivals ? "1" : "0" });
  return fetch(`${receiver}/stats?${query}`).then((r) => r.json());
}

/** Waits until `expected` deliveries arrived under `prefix`, or none arrived for 5 s. */
async function drain(receiver, prefix, expected) {
  let seen = -1;
  let progressAt = Date.now();
  for (;;) {
    const { count } = await receiverStats(receiver, prefix);
    if (count >= expected) break;
    if (count !== seen) [seen, progressAt] = [count, Date.now()];
    if (Date.now() - progressAt > 5_000) break;
    await sleep(50);
  }
  return receiverStats(receiver, prefix, true);
}

/**
 * C2 at saturation: imports through the API for a round, then until every event reached every
 * endpoint: deliveries per second from the first request to the last arrival.
 */
export async function deliverySaturation(target, { receiver, prefix, perCall }, children) {
  await fetch(`${receiver}/stats`, { method: "DELETE" });
  const before = cpuSnapshot(children);
  const started = now();
  const run = await load(target, { seconds: ROUND_SECONDS, connections: SATURATION_CONNECTIONS });
  const expected = run.latencies.length * perCall;
  const stats = await drain(receiver, prefix, expected);
  const after = cpuSnapshot(children);
  const last = Math.max(...stats.arrivals.map(([, at]) => at));
  const delivered = stats.count;
  return {
    rps: delivered / ((last - started) / 1000),
    units: delivered,
    non2xx: run.non2xx + Math.max(0, expected - delivered),
    errors: run.errors,
    cpuUsPerRequest: cpuUsPer(before, after, delivered),
  };
}

/**
 * C2's latency: imports offered at `rate` through the API (one endpoint), each event's latency
 * from the moment its API call was sent to its arrival at the receiver.
 */
export async function deliveryLatency(target, { receiver, prefix }, rate) {
  await fetch(`${receiver}/stats`, { method: "DELETE" });
  const sentAt = new Map();
  const traced = {
    ...target,
    onResponse: (status, body, context) => {
      if (status !== 200) return;
      const subjectId = JSON.parse(body).receipts?.[0]?.subject_id;
      if (subjectId) sentAt.set(subjectId, context.sentAt);
    },
  };
  const api = await fixedRate(traced, rate);
  const stats = await drain(receiver, prefix, sentAt.size);
  const latencies = stats.arrivals
    .filter(([id]) => sentAt.has(id))
    .map(([id, at]) => at - sentAt.get(id))
    .sort((a, b) => a - b);
  return {
    offered: api.offered,
    achieved: latencies.length / ROUND_SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: api.non2xx + Math.max(0, sentAt.size - latencies.length),
    errors: api.errors,
  };
}

/**
 * C3, the webhooks plane alone: with its process paused (SIGSTOP), `fill` puts events on the
 * stream; the clock starts as it resumes (SIGCONT) and stops at the last arrival, so the plane
 * stores, attempts and records a backlog with nothing upstream of it: deliveries per second.
 */
export async function streamDrain(fill, { receiver, prefix, perEvent, plane }, children) {
  await fetch(`${receiver}/stats`, { method: "DELETE" });
  const webhooks = children.get(plane);
  webhooks.kill("SIGSTOP");
  let events;
  try {
    events = await fill();
  } catch (error) {
    webhooks.kill("SIGCONT");
    throw error;
  }
  // The clock starts at the resumption (the fill's acks are not the plane's work).
  const before = cpuSnapshot(children);
  const started = now();
  webhooks.kill("SIGCONT");
  const expected = events * perEvent;
  const stats = await drain(receiver, prefix, expected);
  const after = cpuSnapshot(children);
  const last = Math.max(...stats.arrivals.map(([, at]) => at));
  return {
    rps: stats.count / ((last - started) / 1000),
    units: stats.count,
    non2xx: Math.max(0, expected - stats.count),
    errors: 0,
    cpuUsPerRequest: cpuUsPer(before, after, stats.count),
  };
}

/** What a case measured only at saturation reports for latency: nothing. */
export const NO_LATENCY = {
  offered: Number.NaN,
  achieved: Number.NaN,
  p50: Number.NaN,
  p99: Number.NaN,
  non2xx: 0,
  errors: 0,
};
