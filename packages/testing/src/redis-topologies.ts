import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { redisServerBinary, type ServerProcess, serverProcess } from "@evalp/local-servers";
import { Redis } from "ioredis";
import { freePort } from "./ports.js";

const run = promisify(execFile);
const HOST = "127.0.0.1";
/** How long a node may be silent before it counts as down (sentinels and cluster nodes alike). */
export const REDIS_NODE_TIMEOUT_MS = 1_000;

/** One `redis-server` of a topology: killed and started again at will. */
export type RedisNodeProcess = { port: number; server: ServerProcess; logFile: string };

function node(port: number, dir: string, args: string[]): RedisNodeProcess {
  const logFile = join(dir, `redis-${port}.log`);
  const server = serverProcess({
    name: "redis-server",
    binary: redisServerBinary(),
    args,
    host: HOST,
    port,
    logFile,
    stopSignal: "SIGKILL",
  });
  return { port, server, logFile };
}

/**
 * Data nodes without persistence: a node killed and started again comes back empty. A replica's
 * full sync still writes the primary's snapshot to `dir` (the topology's own folder, not the
 * working directory).
 */
const dataArgs = (port: number, dir: string) => [
  "--port",
  String(port),
  "--dir",
  dir,
  "--bind",
  HOST,
  "--save",
  "",
  "--appendonly",
  "no",
  // A replica's first sync starts as soon as it asks (the default waits 5 s for more to ask).
  "--repl-diskless-sync-delay",
  "0",
];

/** Asks one node, on a connection of its own, and closes the connection. */
async function ask<T>(port: number, question: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    return await question(redis);
  } finally {
    redis.disconnect();
  }
}

/** Kills every process of a topology (one never started or already gone is skipped) and removes its folder. */
async function tearDown(processes: RedisNodeProcess[], dir: string): Promise<void> {
  for (const started of processes) await started.server.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Runs a topology's start-up; when it fails (a node that does not start, a sync that times out),
 * what it started is stopped before the error goes on: nobody else holds the processes to stop.
 */
async function orTearDown(processes: RedisNodeProcess[], dir: string, startUp: () => Promise<void>) {
  try {
    await startUp();
  } catch (error) {
    await tearDown(processes, dir);
    throw error;
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

export type TestRedisSentinelSet = {
  /** `redis+sentinel://…/<name>` naming the three sentinels. */
  url: string;
  name: string;
  /** The primary first, then the replicas (as started; a failover changes which is which). */
  nodes: RedisNodeProcess[];
  sentinels: RedisNodeProcess[];
  /** The node the sentinels name as primary now. */
  primary(): Promise<RedisNodeProcess>;
  /** Waits until the sentinels name a primary other than `port` that answers as one. */
  failedOver(port: number, timeoutMs?: number): Promise<RedisNodeProcess>;
  close(): Promise<void>;
};

/**
 * A Sentinel set on 127.0.0.1: one primary, two replicas and three sentinels (quorum 2) that
 * count a primary down after REDIS_NODE_TIMEOUT_MS of silence. Nothing persisted.
 */
export async function startRedisSentinelSet(name = "mymaster"): Promise<TestRedisSentinelSet> {
  const dir = mkdtempSync(join(tmpdir(), "evalp-sentinel-"));
  const ports = [await freePort(), await freePort(), await freePort()];
  const [primaryPort] = ports as [number];
  const nodes = ports.map((port, i) =>
    node(port, dir, [...dataArgs(port, dir), ...(i === 0 ? [] : ["--replicaof", HOST, String(primaryPort)])]),
  );
  const sentinelPorts = [await freePort(), await freePort(), await freePort()];
  const sentinels = sentinelPorts.map((port) => {
    const conf = join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      conf,
      [
        `port ${port}`,
        `bind ${HOST}`,
        `dir ${dir}`,
        `sentinel monitor ${name} ${HOST} ${primaryPort} 2`,
        `sentinel down-after-milliseconds ${name} ${REDIS_NODE_TIMEOUT_MS}`,
        `sentinel failover-timeout ${name} 10000`,
        `sentinel parallel-syncs ${name} 2`,
        "",
      ].join("\n"),
    );
    return node(port, dir, [conf, "--sentinel"]);
  });

  const primaryPortNow = async (): Promise<number> => {
    for (const sentinel of sentinels) {
      if (!sentinel.server.running) continue;
      const address = await ask(sentinel.port, (redis) =>
        redis.call("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name),
      ).catch(() => null);
      if (Array.isArray(address) && address.length === 2) return Number(address[1]);
    }
    throw new Error("no sentinel names a primary");
  };
  const byPort = (port: number) => {
    const found = nodes.find((candidate) => candidate.port === port);
    if (!found) throw new Error(`no node on ${port}`);
    return found;
  };
  await orTearDown([...sentinels, ...nodes], dir, async () => {
    for (const started of [...nodes, ...sentinels]) await started.server.start();
    // Every replica in sync and every sentinel aware of the others and of both replicas.
    await until("the replicas to sync", async () => {
      const info = await ask(primaryPort, (redis) => redis.info("replication"));
      return (info.match(/state=online/g) ?? []).length === 2;
    });
    await until("the sentinels to know each other", async () => {
      for (const sentinel of sentinels) {
        const known = await ask(sentinel.port, (redis) => redis.call("SENTINEL", "MASTER", name));
        const fields = Array.isArray(known) ? known.map(String) : [];
        const field = (key: string) => Number(fields[fields.indexOf(key) + 1]);
        if (field("num-other-sentinels") !== 2 || field("num-slaves") !== 2) return false;
      }
      return true;
    });
  });

  return {
    url: `redis+sentinel://${sentinelPorts.map((port) => `${HOST}:${port}`).join(",")}/${name}`,
    name,
    nodes,
    sentinels,
    primary: async () => byPort(await primaryPortNow()),
    async failedOver(port, timeoutMs = 30_000) {
      let found = port;
      await until(
        "the sentinels to promote a replica",
        async () => {
          found = await primaryPortNow();
          if (found === port) return false;
          const role = await ask(found, (redis) => redis.call("ROLE"));
          return Array.isArray(role) && role[0] === "master";
        },
        timeoutMs,
      );
      return byPort(found);
    },
    close: () => tearDown([...sentinels, ...nodes], dir),
  };
}

export type TestRedisCluster = {
  /** `redis+cluster://…` naming every node. */
  url: string;
  nodes: RedisNodeProcess[];
  /** The nodes that serve slots now, by the cluster's own view (asked of a node that answers). */
  primaries(): Promise<RedisNodeProcess[]>;
  /** The primary that serves `key`'s slot now. */
  primaryOf(key: string): Promise<RedisNodeProcess>;
  /** Waits until every node that runs says the cluster is `ok`, with `primaries` primaries serving. */
  healthy(primaries?: number, timeoutMs?: number): Promise<void>;
  /** Waits until a replica serves the slots of the primary on `port` and the cluster is `ok` again. */
  failedOver(port: number, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

/**
 * A Redis Cluster on 127.0.0.1: three primaries and a replica each (`redis-cli --cluster create
 * --cluster-replicas 1`), nodes counted down after REDIS_NODE_TIMEOUT_MS. Nothing persisted.
 */
export async function startRedisCluster(): Promise<TestRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "evalp-cluster-"));
  const nodes: RedisNodeProcess[] = [];
  for (let i = 0; i < 6; i++) {
    const port = await freePort();
    const busPort = await freePort();
    nodes.push(
      node(port, dir, [
        ...dataArgs(port, dir),
        "--cluster-enabled",
        "yes",
        "--cluster-port",
        String(busPort),
        "--cluster-config-file",
        join(dir, `nodes-${port}.conf`),
        "--cluster-node-timeout",
        String(REDIS_NODE_TIMEOUT_MS),
      ]),
    );
  }
  await orTearDown(nodes, dir, async () => {
    for (const started of nodes) await started.server.start();
    await run("redis-cli", [
      "--cluster",
      "create",
      ...nodes.map((started) => `${HOST}:${started.port}`),
      "--cluster-replicas",
      "1",
      "--cluster-yes",
    ]);
  });

  const view = async (): Promise<string> => {
    for (const started of nodes) {
      if (!started.server.running) continue;
      const text = await ask(started.port, (redis) => redis.call("CLUSTER", "NODES")).catch(() => null);
      if (typeof text === "string") return text;
    }
    throw new Error("no cluster node answers");
  };
  const primaries = async (): Promise<RedisNodeProcess[]> => {
    const lines = (await view()).trim().split("\n");
    // <id> <ip:port@bus> <flags> <primary> <ping> <pong> <epoch> <state> <slots…>
    const serving = lines
      .map((line) => line.split(" "))
      .filter((fields) => fields[2]?.includes("master") && !fields[2].includes("fail") && fields.length > 8);
    const ports = serving.map((fields) => Number(fields[1]?.split("@")[0]?.split(":")[1]));
    return nodes.filter((started) => ports.includes(started.port));
  };
  const healthy = async (count = 3, timeoutMs = 30_000, without?: number) =>
    until(
      "the cluster to be ok",
      async () => {
        if (without !== undefined && (await primaries()).some((started) => started.port === without))
          return false;
        for (const started of nodes) {
          if (!started.server.running) continue;
          const info = await ask(started.port, (redis) => redis.call("CLUSTER", "INFO"));
          if (typeof info !== "string" || !info.includes("cluster_state:ok")) return false;
        }
        return (await primaries()).length === count;
      },
      timeoutMs,
    );
  await orTearDown(nodes, dir, async () => {
    await healthy();
    // A replica that has not had its first sync never takes its primary's place (Redis counts its
    // data as too old), and the slots stay without a primary: `cluster_state:ok` comes before the
    // syncs, which a primary starts only once its replicas have asked.
    await until("the replicas to sync", async () => {
      let synced = 0;
      for (const started of nodes) {
        const info = await ask(started.port, (redis) => redis.info("replication"));
        if (info.includes("role:slave") && info.includes("master_link_status:up")) synced += 1;
      }
      return synced === nodes.length / 2;
    });
  });

  return {
    url: `redis+cluster://${nodes.map((started) => `${HOST}:${started.port}`).join(",")}`,
    nodes,
    primaries,
    async primaryOf(key) {
      const asked = nodes.find((started) => started.server.running);
      if (!asked) throw new Error("no cluster node runs");
      const slot = Number(await ask(asked.port, (redis) => redis.call("CLUSTER", "KEYSLOT", key)));
      const ranges = await ask(asked.port, (redis) => redis.call("CLUSTER", "SLOTS"));
      for (const range of Array.isArray(ranges) ? ranges : []) {
        if (!Array.isArray(range)) continue;
        const [from, to, primary] = range;
        if (slot >= Number(from) && slot <= Number(to) && Array.isArray(primary)) {
          const port = Number(primary[1]);
          const found = nodes.find((started) => started.port === port);
          if (found) return found;
        }
      }
      throw new Error(`no primary serves slot ${slot}`);
    },
    healthy: (count, timeoutMs) => healthy(count, timeoutMs),
    failedOver: (port, timeoutMs) => healthy(3, timeoutMs, port),
    close: () => tearDown(nodes, dir),
  };
}
