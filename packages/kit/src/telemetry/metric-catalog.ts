/** The platform's processes, as their metrics name them (the `service` label). */
export type MetricProcess = "gateway" | "control" | "platform" | "interview" | "webhooks";

/** One metric of the platform: what it is called, measures and is labelled by, and who exposes it. */
export type MetricDefinition = {
  name: string;
  type: "counter" | "gauge" | "histogram";
  help: string;
  labelNames: readonly string[];
  /** The processes whose ops port serves it. */
  processes: readonly MetricProcess[];
};

const SERVICES = ["control", "platform", "interview", "webhooks"] as const;
const ALL = ["gateway", ...SERVICES] as const;

/**
 * Every metric the platform registers besides Node's defaults (`process_*`, `nodejs_*`), named
 * here once: the code registers them from these definitions, docs/operations.md lists them, and
 * the alerts and the dashboard under deploy/k8s/monitoring may name only these (tests check all
 * three). Names follow Prometheus' conventions: base units (`_seconds`), `_total` for counters,
 * labels of bounded cardinality (route templates and method names, never ids). The RPC and HTTP
 * metrics keep the generic names dashboards for any service use; the platform's own are `evalp_`.
 */
export const METRICS = {
  httpRequestDuration: {
    name: "http_request_duration_seconds",
    type: "histogram",
    help: "Gateway request duration by method, route and status",
    labelNames: ["method", "route", "status"],
    processes: ["gateway"],
  },
  rpcServerCalls: {
    name: "rpc_server_calls_total",
    type: "counter",
    help: "RPCs served, by method and code",
    labelNames: ["method", "code"],
    processes: SERVICES,
  },
  rpcServerDuration: {
    name: "rpc_server_duration_seconds",
    type: "histogram",
    help: "Duration of the RPCs served, by method and code",
    labelNames: ["method", "code"],
    processes: SERVICES,
  },
  rpcClientCalls: {
    name: "rpc_client_calls_total",
    type: "counter",
    help: "RPCs made to another plane, by method and code",
    labelNames: ["method", "code"],
    processes: ALL,
  },
  rpcClientDuration: {
    name: "rpc_client_duration_seconds",
    type: "histogram",
    help: "Duration of the RPCs made to another plane, by method and code",
    labelNames: ["method", "code"],
    processes: ALL,
  },
  outboxLag: {
    name: "evalp_outbox_lag_seconds",
    type: "gauge",
    help: "Age of the oldest unpublished outbox row, by schema (0: all published)",
    labelNames: ["schema"],
    processes: SERVICES,
  },
  outboxPublished: {
    name: "evalp_outbox_published_total",
    type: "counter",
    help: "Outbox rows published to JetStream and stamped, by schema",
    labelNames: ["schema"],
    processes: SERVICES,
  },
  consumerPending: {
    name: "evalp_jetstream_consumer_pending_messages",
    type: "gauge",
    help: "Messages of the stream the durable consumer has not been handed yet",
    labelNames: ["stream", "consumer"],
    processes: ["control", "webhooks"],
  },
  consumerAckPending: {
    name: "evalp_jetstream_consumer_ack_pending_messages",
    type: "gauge",
    help: "Messages handed to the durable consumer and not acked yet",
    labelNames: ["stream", "consumer"],
    processes: ["control", "webhooks"],
  },
  streamBytes: {
    name: "evalp_jetstream_stream_bytes",
    type: "gauge",
    help: "Bytes the stream holds, for each stream the process relays its outbox to",
    labelNames: ["stream"],
    processes: SERVICES,
  },
  streamMaxBytes: {
    name: "evalp_jetstream_stream_max_bytes",
    type: "gauge",
    help: "The stream's size limit (max_bytes); past it JetStream refuses publishes",
    labelNames: ["stream"],
    processes: SERVICES,
  },
  webhookAttemptDuration: {
    name: "evalp_webhook_attempt_duration_seconds",
    type: "histogram",
    help: "Webhook delivery attempts and their duration, by outcome (success, http_error, no_response)",
    labelNames: ["outcome"],
    processes: ["webhooks"],
  },
  webhookDeadLetters: {
    name: "evalp_webhook_dead_letters_total",
    type: "counter",
    help: "Webhook deliveries that turned dead_letter (counted as announced on webhooks.dead_letter)",
    labelNames: [],
    processes: ["webhooks"],
  },
  realtimeSockets: {
    name: "evalp_realtime_sockets",
    type: "gauge",
    help: "Open realtime sockets, by door (participant, agent)",
    labelNames: ["door"],
    processes: ["gateway"],
  },
  idempotencyReplays: {
    name: "evalp_idempotency_replays_total",
    type: "counter",
    help: "Requests answered with the stored answer of their Idempotency-Key",
    labelNames: [],
    processes: ["gateway"],
  },
  idempotencyConflicts: {
    name: "evalp_idempotency_conflicts_total",
    type: "counter",
    help: "Idempotency-Keys refused: in_use (409, the first request still runs) or reused (422, another request)",
    labelNames: ["reason"],
    processes: ["gateway"],
  },
  rateLimitRefusals: {
    name: "evalp_rate_limit_refusals_total",
    type: "counter",
    help: "Requests refused 429, by the limit that refused them",
    labelNames: ["limit"],
    processes: ["gateway"],
  },
  poolConnections: {
    name: "evalp_pg_pool_connections",
    type: "gauge",
    help: "Open connections of the Postgres pool (in use and idle)",
    labelNames: ["pool"],
    processes: SERVICES,
  },
  poolIdle: {
    name: "evalp_pg_pool_idle_connections",
    type: "gauge",
    help: "Idle connections of the Postgres pool",
    labelNames: ["pool"],
    processes: SERVICES,
  },
  poolWaiting: {
    name: "evalp_pg_pool_waiting_clients",
    type: "gauge",
    help: "Queries waiting for a connection of the Postgres pool",
    labelNames: ["pool"],
    processes: SERVICES,
  },
  poolMax: {
    name: "evalp_pg_pool_max_connections",
    type: "gauge",
    help: "The Postgres pool's size",
    labelNames: ["pool"],
    processes: SERVICES,
  },
  retentionDeletedRows: {
    name: "evalp_retention_deleted_rows_total",
    type: "counter",
    help: "Rows deleted by retention, by table",
    labelNames: ["table"],
    processes: SERVICES,
  },
  ready: {
    name: "evalp_ready",
    type: "gauge",
    help: "1 while the process is ready (its /readyz answers 200, degraded or not), 0 otherwise",
    labelNames: [],
    processes: ALL,
  },
  dependencyUp: {
    name: "evalp_dependency_up",
    type: "gauge",
    help: "1 while the readiness check of the dependency passes, 0 while it fails",
    labelNames: ["dependency"],
    processes: ALL,
  },
  readinessChanges: {
    name: "evalp_readiness_changes_total",
    type: "counter",
    help: "Times the readiness status changed (ready, degraded, not_ready)",
    labelNames: [],
    processes: ALL,
  },
} as const satisfies Record<string, MetricDefinition>;

/** What prom-client's constructors take of a definition. */
export function metricConfig<const D extends MetricDefinition>(
  definition: D,
): { name: D["name"]; help: string; labelNames: D["labelNames"] } {
  return { name: definition.name, help: definition.help, labelNames: definition.labelNames };
}
