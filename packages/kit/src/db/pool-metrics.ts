import type { Registry } from "prom-client";
import { METRICS, type MetricDefinition, metricConfig } from "../telemetry/metric-catalog.js";
import { sampledGauge } from "../telemetry/metrics.js";
import type { Pool } from "./db.js";

/**
 * A pool's connections, read at each scrape (`pg.Pool` keeps the counts; reading them costs
 * nothing): `evalp_pg_pool_connections` open (in use + idle), `evalp_pg_pool_idle_connections`,
 * `evalp_pg_pool_waiting_clients` (queries queued for a connection: the pool is too small or
 * the database too slow) and `evalp_pg_pool_max_connections`, each labelled with the pool's name.
 */
export function observePool(registry: Registry, pool: Pool, name: string): void {
  const gauge = (definition: MetricDefinition & { labelNames: readonly ["pool"] }, read: () => number) =>
    sampledGauge(registry, metricConfig(definition), () => [{ labels: { pool: name }, value: read() }]);
  gauge(METRICS.poolConnections, () => pool.totalCount);
  gauge(METRICS.poolIdle, () => pool.idleCount);
  gauge(METRICS.poolWaiting, () => pool.waitingCount);
  gauge(METRICS.poolMax, () => pool.options.max ?? 10);
}
