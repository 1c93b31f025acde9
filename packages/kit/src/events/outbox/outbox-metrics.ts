import { jetstreamManager } from "@nats-io/jetstream";
import { Counter, type Registry } from "prom-client";
import type { Pool } from "../../db/db.js";
import { METRICS, metricConfig } from "../../telemetry/metric-catalog.js";
import { metricOf, sampledGauge } from "../../telemetry/metrics.js";
import type { NatsConnection, StreamRoute } from "../nats.js";

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

/**
 * How full the streams a relay publishes to are, asked at each scrape (one request per stream):
 * `evalp_jetstream_stream_bytes{stream}` and `evalp_jetstream_stream_max_bytes{stream}`. A stream
 * at its limit refuses publishes (discard policy `new`), so their ratio is what warns before the
 * outboxes start to wait (EvalpStreamFilling). Absent while NATS or the stream cannot be reached.
 */
export function observeStreams(registry: Registry, nc: NatsConnection, routes: StreamRoute[]): () => void {
  type Usage = { stream: string; bytes: number; maxBytes: number };
  let usage: Promise<Usage[]> | null = null;
  // Both gauges of one scrape share one request per stream.
  const read = () => {
    usage ??= jetstreamManager(nc)
      .then((jsm) =>
        Promise.all(
          routes.map(async (route) => {
            const info = await jsm.streams.info(route.stream);
            return { stream: route.stream, bytes: info.state.bytes, maxBytes: info.config.max_bytes };
          }),
        ),
      )
      .finally(() => {
        setTimeout(() => {
          usage = null;
        }, 1_000).unref();
      });
    return usage;
  };
  const removals = [
    sampledGauge(registry, metricConfig(METRICS.streamBytes), async () =>
      (await read()).map((each) => ({ labels: { stream: each.stream }, value: each.bytes })),
    ),
    sampledGauge(registry, metricConfig(METRICS.streamMaxBytes), async () =>
      // -1 is JetStream's "no limit": no series rather than a negative limit.
      (await read())
        .filter((each) => each.maxBytes > 0)
        .map((each) => ({ labels: { stream: each.stream }, value: each.maxBytes })),
    ),
  ];
  return () => {
    for (const remove of removals) remove();
  };
}
