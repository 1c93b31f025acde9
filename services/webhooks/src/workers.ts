import {
  auditRoute,
  type Config,
  createOutboxRelay,
  createSubjectErasureConsumer,
  type DurableConsumer,
  type ErasureOrder,
  eventsRoute,
  type Logger,
  type NatsConnection,
  type OutboxRelay,
  observeOutboxLag,
  type Pool,
  type Registry,
  webhooksRoute,
  withTransaction,
} from "@evalp/kit";
import { createEventConsumer } from "./consumer.js";
import { eraseSubjectEvents } from "./db/subject-data.js";
import { createSender } from "./deliver.js";
import { createDispatcher } from "./dispatcher.js";
import { deliveryMetrics } from "./metrics.js";
import { parseSchedule } from "./retry.js";
import { createSecretSealer, type SecretSealer } from "./sealed-secrets.js";
import type { Resolver } from "./ssrf.js";

type WorkerConfig = Pick<
  Config,
  | "EVENTS_STREAM"
  | "EVENTS_SUBJECT_PREFIX"
  | "WEBHOOKS_STREAM"
  | "WEBHOOKS_SUBJECT_PREFIX"
  | "AUDIT_STREAM"
  | "AUDIT_SUBJECT_PREFIX"
  | "EVENTS_STREAM_MAX_BYTES"
  | "EVENTS_STREAM_MAX_AGE_DAYS"
  | "AUDIT_STREAM_MAX_BYTES"
  | "AUDIT_STREAM_MAX_AGE_DAYS"
  | "WEBHOOKS_STREAM_MAX_BYTES"
  | "WEBHOOKS_STREAM_MAX_AGE_DAYS"
  | "NATS_STREAM_REPLICAS"
  | "WEBHOOK_RETRY_SCHEDULE_MS"
  | "WEBHOOK_ALLOW_PRIVATE"
  | "WEBHOOK_TIMEOUT_MS"
  | "WEBHOOK_CONCURRENCY"
  | "WEBHOOK_ENDPOINT_CONCURRENCY"
  | "WEBHOOK_SECRETS_KEYS"
>;

/** The background work of the webhooks plane, apart from its RPCs. */
export type WebhookWorkers = {
  /** Starts the delivery worker, which needs Postgres only. */
  start(): void;
  /** Starts what needs NATS: this plane's outbox relay, the events consumer and the erasure consumer. */
  connect(nc: NatsConnection): Promise<void>;
  /** Stops consuming, relays what it holds, lets attempts in flight finish (at most `drainMs`). */
  stop(drainMs?: number): Promise<void>;
  /** A delivery is due now. */
  wake(): void;
};

/**
 * The three workers of docs/webhooks.md on this plane: the events consumer (stream → deliveries), the
 * dispatcher (deliveries → signed POSTs, retries, dead letters) and the outbox relay of this
 * plane's own messages (`webhook.endpoint_disabled` events, `webhooks.dead_letter`).
 */
export function createWebhookWorkers(options: {
  pool: Pool;
  logger: Logger;
  config: WorkerConfig;
  /** What opens the endpoints' secrets to sign; default: from WEBHOOK_SECRETS_KEYS. */
  sealer?: SecretSealer;
  resolver?: Resolver;
  /** Where the workers measure: attempts, dead letters, the outbox, the consumer's backlog. */
  metrics?: Registry;
  /**
   * Tells control this plane erased what it held about a subject (docs/subjects.md#erasure);
   * without it these workers take no part in erasures (another replica's do).
   */
  reportErasure?: (order: ErasureOrder) => Promise<void>;
}): WebhookWorkers {
  const { config } = options;
  const measured = deliveryMetrics(options.metrics);
  // Measured from now on, NATS or not: a relay that cannot start is what the lag shows.
  if (options.metrics) observeOutboxLag(options.metrics, options.pool);
  const sender = createSender({
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    resolver: options.resolver,
  });
  const dispatcher = createDispatcher({
    pool: options.pool,
    logger: options.logger,
    sealer: options.sealer ?? createSecretSealer(config),
    sender,
    schedule: parseSchedule(config.WEBHOOK_RETRY_SCHEDULE_MS),
    concurrency: config.WEBHOOK_CONCURRENCY,
    perEndpoint: config.WEBHOOK_ENDPOINT_CONCURRENCY,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    metrics: measured,
  });
  let relay: OutboxRelay | null = null;
  let consumer: DurableConsumer | null = null;
  let erasures: DurableConsumer | null = null;
  return {
    start: () => dispatcher.start(),
    async connect(nc) {
      relay = createOutboxRelay({
        pool: options.pool,
        nc,
        routes: [eventsRoute(config), webhooksRoute(config), auditRoute(config)],
        logger: options.logger,
        ...(options.metrics && { metrics: options.metrics }),
        onPublished: measured.published,
      });
      await relay.start();
      consumer = createEventConsumer({
        nc,
        pool: options.pool,
        logger: options.logger,
        route: eventsRoute(config),
        dispatcher,
        ...(options.metrics && { metrics: options.metrics }),
      });
      consumer.start();
      if (!options.reportErasure) return;
      erasures = createSubjectErasureConsumer({
        plane: "webhooks",
        nc,
        route: eventsRoute(config),
        logger: options.logger,
        ...(options.metrics && { metrics: options.metrics }),
        erase: (order) =>
          withTransaction(options.pool, (tx) => eraseSubjectEvents(tx, order.environmentId, order.subjectId)),
        report: options.reportErasure,
      });
      erasures.start();
    },
    async stop(drainMs) {
      await erasures?.stop();
      await consumer?.stop();
      await dispatcher.stop(drainMs);
      await relay?.stop();
    },
    wake: () => dispatcher.wake(),
  };
}
