import type { RedisClient } from "@evalp/gateway";
import { Cluster } from "ioredis";

/** The keys matching `pattern` (a test's prefix): on a Cluster, those of every primary. */
export async function keysMatching(redis: RedisClient, pattern: string): Promise<string[]> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  const found: string[] = [];
  for (const node of nodes) found.push(...(await node.keys(pattern)));
  return found;
}

/** Deletes the keys matching `pattern`, each by a command of its own (a Cluster's lie in several slots). */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  const keys = await keysMatching(redis, pattern);
  await Promise.all(keys.map((key) => redis.del(key)));
}

/**
 * How many connections are subscribed to `channel`: on a Cluster the gateways' channels are
 * sharded (SSUBSCRIBE, on the channel's slot's node), so every node is asked for its sharded
 * subscribers.
 */
export async function subscribers(redis: RedisClient, channel: string): Promise<number> {
  const nodes = redis instanceof Cluster ? redis.nodes("all") : [redis];
  let count = 0;
  for (const node of nodes) {
    const [, subscribed] =
      redis instanceof Cluster
        ? await node.pubsub("SHARDNUMSUB", channel)
        : await node.pubsub("NUMSUB", channel);
    count += Number(subscribed);
  }
  return count;
}
