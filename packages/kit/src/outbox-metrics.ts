import { Counter, type Registry } from "prom-client";
import type { Pool } from "./db.js";
import { METRICS, metricConfig } from "./metric-catalog.js";
import { metricOf, sampledGauge } from "./metrics.js";

/**
 * How far a schema's outbox is behind, read at each scrape: `evalp_outbox_lag_seconds{schema}`,
 * the age of its oldest unpublished row (0 when every row is published). It is read from the
 * table, not from the relay, so that it keeps growing while no relay runs (NATS down, the relay
 * failing): the partial index on unpublished rows makes it one index probe. Every replica
 * reports the same value.
 */
export function observeOutboxLag(registry: Registry, pool: Pool): void {
  sampledGauge(registry, metricConfig(METRICS.outboxLag), async () => {
    const found = await pool.query<{ schema: string; lag: number }>(
      `SELECT current_schema() AS schema,
                COALESCE(EXTRACT(EPOCH FROM clock_timestamp() - min(created_at)), 0)::float8 AS lag
         FROM outbox WHERE published_at IS NULL`,
    );
    const row = found.rows[0];
    return row ? [{ labels: { schema: row.schema }, value: Math.max(0, row.lag) }] : [];
  });
}

/** `evalp_outbox_published_total{schema}`: rows the relays of this process published (and stamped). */
export function outboxPublishedCounter(registry: Registry): Counter<"schema"> {
  return metricOf(
    registry,
    METRICS.outboxPublished.name,
    () => new Counter({ ...metricConfig(METRICS.outboxPublished), registers: [registry] }),
  );
}
