// The production overlay's Redis option in the cluster: Valkey with Sentinel from the Bitnami chart
// (overlays/prod/redis-values.yaml), as docs/operations.md#redis-failover describes it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseRedisUrl } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const PROD = join(ROOT, "deploy/k8s/overlays/prod");
const TEXT = readFileSync(join(PROD, "redis-values.yaml"), "utf8");
const VALUES = parse(TEXT);

describe("redis-values.yaml (Valkey with Sentinel)", () => {
  it("runs three nodes with a sentinel each, quorum 2, one node per zone, a disruption budget", () => {
    expect(VALUES.architecture).toBe("replication");
    expect(VALUES.sentinel).toMatchObject({ enabled: true, quorum: 2 });
    expect(VALUES.replica.replicaCount).toBe(3);
    expect(VALUES.replica.persistence.enabled).toBe(true);
    expect(VALUES.replica.pdb).toMatchObject({ create: true, maxUnavailable: 1 });
    expect(VALUES.replica.topologySpreadConstraints).toContainEqual(
      expect.objectContaining({
        topologyKey: "topology.kubernetes.io/zone",
        whenUnsatisfiable: "DoNotSchedule",
      }),
    );
  });

  it("keeps idempotency records: never evicted, an append-only file, a primary alone refuses writes", () => {
    const config = String(VALUES.commonConfiguration);
    expect(config).toMatch(/^maxmemory-policy noeviction$/m);
    expect(config).toMatch(/^appendonly yes$/m);
    expect(config).toMatch(/^min-replicas-to-write [1-9]$/m);
    expect(VALUES.auth).toMatchObject({ enabled: true, sentinel: true, existingSecret: "evalp-redis" });
  });

  it("names in its header a REDIS_URL the gateway reads as those sentinels and that primary", () => {
    const url = /REDIS_URL=(\S+)/.exec(TEXT)?.[1] ?? "";
    const target = parseRedisUrl(url.replace("<password>", "secret"));
    expect(target).toMatchObject({ kind: "sentinel", name: VALUES.sentinel.primarySet, password: "secret" });
    if (target.kind !== "sentinel") throw new Error("not a sentinel URL");
    expect(target.sentinels).toHaveLength(VALUES.replica.replicaCount);
    expect(target.sentinels.every((sentinel) => sentinel.port === 26379)).toBe(true);
  });
});
