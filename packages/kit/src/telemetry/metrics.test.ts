import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Code, ConnectError } from "@connectrpc/connect";
import { HealthService } from "@evalp/proto/common/v1/health";
import { describe, expect, it } from "vitest";
import { createOpsServer } from "../process/ops-server.js";
import { METRICS } from "./metric-catalog.js";
import { createMetricsRegistry, EVENT_LOOP_SAMPLE_MS, rpcClientMetrics, sampledGauge } from "./metrics.js";

const check = HealthService.method.check;

/** The samples of one metric in a registry's exposition, as `{labels}` → value. */
async function samples(registry: ReturnType<typeof createMetricsRegistry>, name: string) {
  const text = await registry.metrics();
  const found: Record<string, number> = {};
  for (const line of text.split("\n")) {
    const match = new RegExp(`^${name}(\\{[^}]*\\})? (\\S+)$`).exec(line);
    if (!match) continue;
    // Without the default label, wherever prom-client put it.
    const labels = (match[1] ?? "{}")
      .replace(/service="test"/, "")
      .replace(/\{,|,,|,\}/, (m) => m.replace(",", ""));
    found[labels] = Number(match[2]);
  }
  return found;
}

describe("createMetricsRegistry", () => {
  it("exports the event loop's delay, sampled less often than prom-client's default", async () => {
    const registry = createMetricsRegistry("test");
    expect(EVENT_LOOP_SAMPLE_MS).toBeGreaterThan(10);
    expect(Object.keys(await samples(registry, "nodejs_eventloop_lag_p99_seconds"))).toEqual(["{}"]);
  });
});

describe("sampledGauge", () => {
  it("reads every source at each scrape, leaves out one that fails, and forgets a removed one", async () => {
    const registry = createMetricsRegistry("test");
    const config = { name: "test_depth", help: "depth", labelNames: ["queue"] } as const;
    let depth = 3;
    const removeA = sampledGauge(registry, config, () => [{ labels: { queue: "a" }, value: depth }]);
    sampledGauge(registry, config, async () => [{ labels: { queue: "b" }, value: 7 }]);
    sampledGauge(registry, config, async () => {
      throw new Error("unreachable");
    });
    expect(await samples(registry, "test_depth")).toEqual({ '{queue="a"}': 3, '{queue="b"}': 7 });
    depth = 4;
    expect(await samples(registry, "test_depth")).toEqual({ '{queue="a"}': 4, '{queue="b"}': 7 });
    removeA();
    expect(await samples(registry, "test_depth")).toEqual({ '{queue="b"}': 7 });
  });
});

describe("rpcClientMetrics", () => {
  it("counts and times each call by method and code, as the caller saw it, and passes errors on", async () => {
    const registry = createMetricsRegistry("test");
    const observe = rpcClientMetrics(registry);
    // The same observer for the same registry: two transports of one process share the metrics.
    expect(rpcClientMetrics(registry)).toBe(observe);
    await observe(check, async () => "answer");
    const refused = new ConnectError("no", Code.Unavailable);
    await expect(observe(check, async () => Promise.reject(refused))).rejects.toBe(refused);
    await expect(observe(check, async () => Promise.reject(new Error("bug")))).rejects.toThrow("bug");
    const method = 'method="evalp.common.v1.HealthService/Check"';
    expect(await samples(registry, METRICS.rpcClientCalls.name)).toEqual({
      [`{${method},code="ok"}`]: 1,
      [`{${method},code="Unavailable"}`]: 1,
      [`{${method},code="unknown"}`]: 1,
    });
    expect(await samples(registry, `${METRICS.rpcClientDuration.name}_count`)).toEqual({
      [`{${method},code="ok"}`]: 1,
      [`{${method},code="Unavailable"}`]: 1,
      [`{${method},code="unknown"}`]: 1,
    });
  });
});

describe("the ops server's readiness metrics", () => {
  it("reports readiness and each dependency at a scrape, and counts every change of status", async () => {
    const registry = createMetricsRegistry("test");
    let redisUp = true;
    const server = createOpsServer({
      registry,
      checks: [
        { name: "postgres", check: async () => {} },
        {
          name: "redis",
          degrades: true,
          check: async () => {
            if (!redisUp) throw new Error("down");
          },
        },
      ],
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A readiness answer is reused for a second: wait past it before asking again.
    const nextAnswer = () => sleep(1_100);
    try {
      expect(await samples(registry, METRICS.ready.name)).toEqual({ "{}": 1 });
      expect(await samples(registry, METRICS.dependencyUp.name)).toEqual({
        '{dependency="postgres"}': 1,
        '{dependency="redis"}': 1,
      });
      expect(await samples(registry, METRICS.readinessChanges.name)).toEqual({ "{}": 0 });
      redisUp = false;
      await nextAnswer();
      expect((await fetch(`${url}/readyz`)).status).toBe(200);
      expect(await samples(registry, METRICS.dependencyUp.name)).toMatchObject({ '{dependency="redis"}': 0 });
      redisUp = true;
      await nextAnswer();
      expect(await (await fetch(`${url}/metrics`)).text()).toContain(
        'evalp_dependency_up{dependency="redis",service="test"} 1',
      );
      // ready → degraded → ready.
      expect(await samples(registry, METRICS.readinessChanges.name)).toEqual({ "{}": 2 });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
