// Load through autocannon: one run, a case at saturation (throughput and CPU per request), and a
// case at a fixed offered rate (latency).
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { cpuSnapshot, cpuUsPer } from "./cpu.mjs";
import { FIXED_STREAMS, ROUND_SECONDS, SATURATION_CONNECTIONS } from "./settings.mjs";
import { percentile } from "./stats.mjs";

/** One autocannon run; latencies are kept exactly (autocannon's histogram has 1 ms resolution). */
export async function load(target, options) {
  const latencies = [];
  let non2xx = 0;
  const instance = autocannon({
    url: target.url,
    method: target.method ?? "GET",
    headers: target.headers,
    body: target.body,
    requests:
      target.setupRequest || target.onResponse
        ? [{ setupRequest: target.setupRequest, onResponse: target.onResponse }]
        : undefined,
    duration: options.seconds,
    connections: options.connections,
    overallRate: options.rate,
    timeout: 10,
  });
  instance.on("response", (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
    else non2xx += 1;
  });
  const result = await instance;
  return { latencies, non2xx, errors: result.errors + result.timeouts, seconds: result.duration };
}

/** Requests a second with SATURATION_CONNECTIONS keep-alive connections, and the CPU each cost. */
export async function saturation(target, children) {
  const before = cpuSnapshot(children);
  const run = await load(target, { seconds: ROUND_SECONDS, connections: SATURATION_CONNECTIONS });
  const after = cpuSnapshot(children);
  const ok = run.latencies.length;
  return {
    rps: ok / run.seconds,
    units: ok,
    non2xx: run.non2xx,
    errors: run.errors,
    cpuUsPerRequest: cpuUsPer(before, after, ok),
  };
}

/**
 * p50/p99 at `rate` requests a second, offered by FIXED_STREAMS runs of one connection each,
 * started evenly across a second (autocannon paces each connection per second, so staggering
 * them spreads the bursts); with `children`, the CPU each request cost at that rate too.
 */
export async function fixedRate(target, rate, children) {
  const perStream = Math.max(1, Math.round(rate / FIXED_STREAMS));
  const before = children ? cpuSnapshot(children) : null;
  const runs = [];
  for (let i = 0; i < FIXED_STREAMS; i++) {
    runs.push(load(target, { seconds: ROUND_SECONDS, connections: 1, rate: perStream }));
    await sleep(1000 / FIXED_STREAMS);
  }
  const done = await Promise.all(runs);
  const after = children ? cpuSnapshot(children) : null;
  const latencies = done.flatMap((run) => run.latencies).sort((a, b) => a - b);
  return {
    ...(before ? { cpuUsPerRequest: cpuUsPer(before, after, latencies.length) } : {}),
    offered: perStream * FIXED_STREAMS,
    achieved: latencies.length / ROUND_SECONDS,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: done.reduce((sum, run) => sum + run.non2xx, 0),
    errors: done.reduce((sum, run) => sum + run.errors, 0),
  };
}
