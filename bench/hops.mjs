// H0 and H1: one RPC measured from a client process of its own (bench/servers.mjs hop-client),
// with the CPU of both ends per call.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { cpuTicks, ticksToMs } from "./cpu.mjs";
import { children } from "./processes.mjs";
import { ROOT, ROUND_SECONDS, SATURATION_CONNECTIONS } from "./settings.mjs";
import { percentile } from "./stats.mjs";

/** The rate at which H0 and H1 latency is measured: calls a second, paced by the client. */
const HOP_RATE = 1000;

/** The process serving a hop of `kind` ("h2" or "connect"), as the platform starts it. */
const hopServer = (kind) => `hop-${kind}`;

/**
 * Runs `bench/servers.mjs hop-client` against a hop server. The client warms up, says "warm",
 * and starts its clock when told "go", so that the server's CPU is read over the same window.
 */
async function hopClient(kind, url, options) {
  const serverName = hopServer(kind);
  const args = [
    "bench/servers.mjs",
    "hop-client",
    kind,
    url,
    String(ROUND_SECONDS),
    String(options.concurrency ?? 1),
  ];
  if (options.rate) args.push(String(options.rate));
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  let serverBefore = 0;
  let result;
  for await (const line of lines) {
    if (line === "warm") {
      serverBefore = cpuTicks(children.get(serverName).pid);
      child.stdin.write("go\n");
    } else {
      result = JSON.parse(line);
    }
  }
  const serverMs = ticksToMs(cpuTicks(children.get(serverName).pid) - serverBefore);
  if (!result) throw new Error(`hop client (${kind}) gave no result`);
  return { ...result, serverCpuUs: serverMs * 1000 };
}

/** H0/H1 at saturation: calls a second with SATURATION_CONNECTIONS at once, CPU of both ends. */
async function hopSaturation(kind, url) {
  const run = await hopClient(kind, url, { concurrency: SATURATION_CONNECTIONS });
  const perCall = (us) => (run.calls > 0 ? us / run.calls : Number.NaN);
  return {
    rps: run.calls / run.seconds,
    non2xx: 0,
    errors: run.failed,
    cpuUsPerRequest: { "hop client": perCall(run.cpuUs), [hopServer(kind)]: perCall(run.serverCpuUs) },
  };
}

/** H0/H1 latency at HOP_RATE calls a second. */
async function hopLatency(kind, url) {
  const run = await hopClient(kind, url, { rate: HOP_RATE });
  const latencies = run.latenciesMs.sort((a, b) => a - b);
  return {
    offered: HOP_RATE,
    achieved: run.calls / run.seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    non2xx: 0,
    errors: run.failed,
  };
}

/** A hop case's measurements: `kind` "h2" (H0) or "connect" (H1), its server at `url`. */
export const hopMeasurements = (kind, url) => ({
  saturation: () => hopSaturation(kind, url),
  fixed: () => hopLatency(kind, url),
});
