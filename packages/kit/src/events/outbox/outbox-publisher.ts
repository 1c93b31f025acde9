import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { type AuditEntry, auditRoute } from "../../audit/audit.js";
import type { Config } from "../../config/config.js";
import type { Pool } from "../../db/db.js";
import { connectNats, eventsRoute, type NatsConnection, type StreamRoute } from "../nats.js";
import { observeOutboxLag } from "./outbox-metrics.js";
import { createOutboxRelay, type OutboxRelay } from "./outbox-relay.js";

export type { AuditEntry };

/** A process's outbox relay with its own NATS connection. */
export type OutboxPublisher = {
  /** Connects to NATS (waiting for it if need be) and starts relaying; resolves with the connection. */
  start(): Promise<NatsConnection>;
  /** Publishes what the relay holds, then drains the connection. */
  stop(): Promise<void>;
};

/**
 * The event path's first leg as every emitting service runs it: its outbox relayed to the
 * events stream and the audit stream. The API of a service does not wait for NATS; rows wait in
 * the outbox until it answers. Register `stop` for shutdown before the servers, so it runs after
 * they drained.
 */
export function createOutboxPublisher(options: {
  name: string;
  config: Pick<
    Config,
    | "NATS_URL"
    | "NATS_USER"
    | "NATS_PASSWORD"
    | "NODE_ENV"
    | "NATS_STREAM_REPLICAS"
    | "EVENTS_STREAM"
    | "EVENTS_SUBJECT_PREFIX"
    | "AUDIT_STREAM"
    | "AUDIT_SUBJECT_PREFIX"
    | "EVENTS_STREAM_MAX_BYTES"
    | "EVENTS_STREAM_MAX_AGE_DAYS"
    | "AUDIT_STREAM_MAX_BYTES"
    | "AUDIT_STREAM_MAX_AGE_DAYS"
  >;
  pool: Pool;
  logger: Logger;
  /** Further routes (the webhooks plane's own stream). */
  routes?: StreamRoute[];
  /** Where the outbox's lag and the rows published are measured. */
  metrics?: Registry;
}): OutboxPublisher {
  // Measured from now on, NATS or not: a relay that cannot start is what the lag shows.
  if (options.metrics) observeOutboxLag(options.metrics, options.pool);
  let nats: NatsConnection | null = null;
  let relay: OutboxRelay | null = null;
  return {
    async start() {
      nats = await connectNats(options.config, options.name, options.logger);
      relay = createOutboxRelay({
        pool: options.pool,
        nc: nats,
        routes: [eventsRoute(options.config), auditRoute(options.config), ...(options.routes ?? [])],
        logger: options.logger,
        ...(options.metrics && { metrics: options.metrics }),
      });
      await relay.start();
      return nats;
    },
    async stop() {
      await relay?.stop();
      await nats?.drain();
    },
  };
}
