import type { RedisClient } from "@evalp/gateway";
import { Cluster } from "ioredis";

/**
 * Deletes the keys matching `pattern` (a test's prefix): on a Cluster, every primary's, each key by
 * a command of its own (keys of different slots cannot go in one DEL).
 */
export async function deleteKeys(redis: RedisClient, pattern: string): Promise<void> {
  const nodes = redis instanceof Cluster ? redis.nodes("master") : [redis];
  for (const node of nodes) {
    const keys = await node.keys(pattern);
    await Promise.all(keys.map((key) => redis.del(key)));
  }
}
