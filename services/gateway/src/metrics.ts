import { METRICS, metricConfig, metricOf, type Registry, sampledGauge } from "@evalp/kit";
import { Counter } from "prom-client";

/** The limits a request can be refused by (429): the edge limiter's three, the attempt limiter's. */
export type RateLimitName =
  | "address"
  | "address_refusals"
  | "credential"
  | "login"
  | "password_reset"
  | "password_hash"
  | "sockets_per_session"
  | "sockets_per_address"
  | "event_streams_per_credential"
  | "event_streams_per_address"
  | "invitations";

/** What the gateway's plugins report, apart from the requests themselves (`registerOps`). */
export type GatewayMetrics = {
  /** A request answered 429 by `limit`. */
  rateLimited(limit: RateLimitName): void;
  /** An Idempotency-Key whose stored answer was replayed. */
  idempotencyReplayed(): void;
  /** An Idempotency-Key refused: still in use by a running request (409), or reused with another request (422). */
  idempotencyConflict(reason: "in_use" | "reused"): void;
  /** Reads the open sockets of each realtime door at each scrape. */
  observeSockets(read: () => Record<"participant" | "agent", number>): void;
};

/**
 * `evalp_rate_limit_refusals_total{limit}`, `evalp_idempotency_replays_total`,
 * `evalp_idempotency_conflicts_total{reason}` and `evalp_realtime_sockets{door}` in the gateway's
 * registry (docs/operations.md lists them).
 */
export function gatewayMetrics(registry: Registry): GatewayMetrics {
  const refusals = metricOf(
    registry,
    METRICS.rateLimitRefusals.name,
    () => new Counter({ ...metricConfig(METRICS.rateLimitRefusals), registers: [registry] }),
  );
  const replays = metricOf(
    registry,
    METRICS.idempotencyReplays.name,
    () => new Counter({ ...metricConfig(METRICS.idempotencyReplays), registers: [registry] }),
  );
  const conflicts = metricOf(
    registry,
    METRICS.idempotencyConflicts.name,
    () => new Counter({ ...metricConfig(METRICS.idempotencyConflicts), registers: [registry] }),
  );
  return {
    rateLimited: (limit) => refusals.inc({ limit }),
    idempotencyReplayed: () => replays.inc(),
    idempotencyConflict: (reason) => conflicts.inc({ reason }),
    observeSockets(read) {
      sampledGauge(registry, metricConfig(METRICS.realtimeSockets), () =>
        Object.entries(read()).map(([door, value]) => ({ labels: { door }, value })),
      );
    },
  };
}
