// Runs the API suite against a Redis topology of its own: a Sentinel set (1 primary, 2 replicas,
// 3 sentinels) or a Cluster (3 primaries, 3 replicas), on free ports of 127.0.0.1, started from
// redis-server as the reliability tests start them. The topology is stopped however the run
// ends (pass, fail, Ctrl-C, SIGTERM). Expects the workspace packages built (npm run build).
//
//   node scripts/test-on-redis.mjs sentinel|cluster [vitest arguments…]
//   npm run test:api:sentinel -- tests/api/idempotency.int.test.ts
//
// Every vitest argument after the topology is passed on (file filters, --maxWorkers=2, …).
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { startRedisCluster, startRedisSentinelSet } from "@evalp/testing";

const starters = { sentinel: startRedisSentinelSet, cluster: startRedisCluster };
const [topology = "", ...vitestArgs] = process.argv.slice(2);
const start = Object.hasOwn(starters, topology) ? starters[topology] : undefined;
if (!start) {
  console.error("usage: node scripts/test-on-redis.mjs sentinel|cluster [vitest arguments…]");
  process.exit(2);
}

const vitest = fileURLToPath(new URL("../node_modules/vitest/vitest.mjs", import.meta.url));
const began = Date.now();
const redis = await start();
console.error(`test-on-redis: ${topology} at ${redis.url}`);

/** The vitest run's exit code; a signal that ended it counts as a failure. */
const code = await new Promise((resolve) => {
  const child = spawn(process.execPath, [vitest, "run", "--project", "api", ...vitestArgs], {
    stdio: "inherit",
    env: { ...process.env, REDIS_URL: redis.url },
  });
  // Ctrl-C reaches vitest too (same process group); a SIGTERM sent to this script alone is passed
  // on. Either way the topology is stopped once vitest has exited, not before.
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(signal, () => child.kill(signal));
  }
  child.on("error", (error) => {
    console.error(`test-on-redis: vitest did not start: ${error.message}`);
    resolve(1);
  });
  child.on("exit", (exitCode) => resolve(exitCode ?? 1));
});

await redis.close();
console.error(
  `test-on-redis: ${topology} run ended with ${code} after ${Math.round((Date.now() - began) / 1000)} s`,
);
process.exit(code);
