import type { Logger } from "pino";
import { type Config, loadConfig, serviceVerifier } from "../config/config.js";
import { createPool, type Pool } from "../db/db.js";
import { observePool } from "../db/pool-metrics.js";
import { createRetention, type Retention, type RetentionTask } from "../db/retention.js";
import type { DurableConsumer } from "../events/durable-consumer.js";
import { eventsRoute, type NatsConnection } from "../events/nats.js";
import { createOutboxPublisher } from "../events/outbox/outbox-publisher.js";
import {
  createSubjectErasureConsumer,
  type ErasingPlane,
  type ErasureOrder,
} from "../subjects/subject-erasure-consumer.js";
import { createLogger, logRuntime } from "../telemetry/logger.js";
import { createMetricsRegistry } from "../telemetry/metrics.js";
import { inService, startTelemetry } from "../telemetry/telemetry.js";
import { type RunningService, type ServiceDefinition, serveService } from "./serve.js";
import { createShutdownManager, type ShutdownManager } from "./shutdown.js";

/** Where a process listens: its API (HTTP or RPC) and its ops server. */
export type ProcessPorts = { port: number; opsPort: number };

/**
 * One process of the platform, built from its configuration by its service's composition
 * function (`createControl`, …, `createGateway`) and not yet listening. Its `main.ts` and the
 * tests run it alike.
 */
export type Process = {
  name: string;
  /** Every teardown of the process, registered as its parts were made. */
  shutdown: ShutdownManager;
  /** Listens (registering the servers' teardown); resolves with the ports once it serves. */
  listen(): Promise<ProcessPorts>;
  /** Waits for NATS and starts what needs it; the process serves meanwhile. */
  connect(): Promise<void>;
};

/** What tests, running every process in one, choose apart from the shared configuration. */
export type ProcessOptions = {
  /** Where to listen instead of the configured ports (0: a free one). */
  ports?: ProcessPorts;
  /** The NATS user instead of the configured one: each process connects as itself. */
  nats?: Pick<Config, "NATS_USER" | "NATS_PASSWORD">;
};

/** A composition function, as every service's package exports one. */
export type ComposeProcess<P extends Process = Process> = (
  config: Config,
  logger: Logger,
  options?: ProcessOptions,
) => Promise<P>;

/**
 * A process's `main.ts`: load the configuration, make the logger, compose, listen, shut down
 * gracefully on SIGTERM/SIGINT. NATS is waited for after listening: the API does not depend on it.
 */
export async function runProcess(name: string, compose: ComposeProcess): Promise<void> {
  const config = loadConfig();
  const logger = createLogger(name, config.LOG_LEVEL);
  logRuntime(logger);
  const composed = await compose(config, logger);
  const ports = await composed.listen();
  composed.shutdown.listen();
  logger.info({ port: ports.port, ops_port: ports.opsPort }, `${name} listening`);
  await composed.connect();
}

/** A service's process: a plane with its own schema behind Connect RPC. */
export type ServiceProcess = Process & {
  /** The pool on the service's schema. */
  pool: Pool;
  /** Stops serving RPCs, as an outage would (shutdown still runs every other step). */
  stopServing(): Promise<void>;
};

/**
 * What every service's composition starts with: its shutdown manager, its pool (ended last) and
 * its metrics registry (served on the ops port; the pool is observed in it). `serve` finishes the
 * process once the rest is wired: its RPC and ops servers, closed first at shutdown, and the work
 * that waits for NATS.
 */
export function serviceBase(
  service: {
    name: string;
    schema: string;
    /** The RPC and ops ports when SERVICE_PORT and OPS_PORT are unset. */
    ports: ProcessPorts;
  },
  config: Config,
  logger: Logger,
  options: ProcessOptions = {},
) {
  const shutdown = createShutdownManager(logger, config.SHUTDOWN_GRACE_MS);
  registerTelemetry(shutdown, config, service.name);
  const pool = createPool({
    databaseUrl: config.DATABASE_URL,
    schema: service.schema,
    max: config.DATABASE_POOL_SIZE,
  });
  shutdown.register("postgres", () => pool.end());
  const registry = createMetricsRegistry(service.name);
  observePool(registry, pool, service.schema);
  let retention: Retention | null = null;
  const ports = options.ports ?? {
    port: config.SERVICE_PORT ?? service.ports.port,
    opsPort: config.OPS_PORT ?? service.ports.opsPort,
  };
  const natsConfig = { ...config, ...options.nats };
  return {
    shutdown,
    pool,
    /** The configuration NATS is connected with: this process's user. */
    natsConfig,
    /** The process's metrics, served on its ops port; its parts (clients, relay, consumers, workers) count there. */
    registry,
    /**
     * Deletes, on the RETENTION_* schedule once the servers listen, what these tasks find in the
     * service's schema (nothing when RETENTION_ENABLED is false).
     */
    retain(tasks: RetentionTask[]): void {
      if (!config.RETENTION_ENABLED || retention) return;
      const runner = createRetention({
        pool,
        logger,
        registry,
        tasks,
        batchSize: config.RETENTION_BATCH_SIZE,
        intervalMs: config.RETENTION_INTERVAL_MS,
      });
      retention = runner;
      shutdown.register("retention", () => runner.stop());
    },
    /**
     * The process's outbox relay (outbox-publisher.ts): events and audit records wait in the
     * outbox until NATS answers. Its stop is registered now, before the servers', so that at
     * shutdown it runs after they drained and publishes what they committed.
     */
    outboxRelay() {
      const publisher = createOutboxPublisher({
        name: service.name,
        config: natsConfig,
        pool,
        logger,
        metrics: registry,
      });
      shutdown.register("outbox relay", () => publisher.stop());
      return publisher;
    },
    /**
     * The plane's part of every subject erasure (docs/subjects.md#erasure): `start` consumes the
     * orders on the process's NATS connection once it answers, each erased with `erase` and
     * reported done to control; stopped at shutdown.
     */
    subjectErasures(
      plane: ErasingPlane,
      parts: {
        erase: (order: ErasureOrder) => Promise<void>;
        control: {
          completeSubjectErasure(done: {
            environmentId: string;
            subjectId: string;
            plane: ErasingPlane;
          }): Promise<unknown>;
        };
      },
    ) {
      let consumer: DurableConsumer | null = null;
      shutdown.register("erasure consumer", async () => consumer?.stop());
      return {
        start(nc: NatsConnection): void {
          consumer = createSubjectErasureConsumer({
            plane,
            nc,
            route: eventsRoute(natsConfig),
            logger,
            metrics: registry,
            erase: parts.erase,
            report: async (order) => {
              await parts.control.completeSubjectErasure({
                environmentId: order.environmentId,
                subjectId: order.subjectId,
                plane,
              });
            },
          });
          consumer.start();
        },
      };
    },
    serve(
      definition: ServiceDefinition,
      work: {
        /** Starts the background work that needs no NATS, once the servers listen. */
        listening?: () => void;
        /** Waits for NATS and starts what needs it. */
        connect: () => Promise<void>;
      },
    ): ServiceProcess {
      let running: RunningService | null = null;
      let closing: Promise<void> | null = null;
      const stopServing = () => {
        closing ??= running?.close() ?? Promise.resolve();
        return closing;
      };
      const listen = async (): Promise<ProcessPorts> => {
        running = await serveService(definition, {
          logger,
          host: config.HOST,
          rpcPort: ports.port,
          opsPort: ports.opsPort,
          maxConnectionAgeMs: config.RPC_MAX_CONNECTION_AGE_MS,
          tokens: serviceVerifier(config, service.name),
          registry,
        });
        shutdown.register("servers", stopServing);
        work.listening?.();
        retention?.start();
        return { port: running.rpcPort, opsPort: running.opsPort };
      };
      return {
        name: service.name,
        shutdown,
        pool,
        stopServing,
        // What the servers and the background work start keeps the process's name (telemetry.ts).
        listen: () => inService(service.name, listen),
        connect: () => inService(service.name, work.connect),
      };
    },
  };
}

/**
 * Starts tracing for the process when an endpoint is configured (telemetry.ts), released last at
 * shutdown so that the spans of every other step are exported. Call it first in a composition.
 */
export function registerTelemetry(shutdown: ShutdownManager, config: Config, name: string): void {
  const telemetry = startTelemetry(config, name);
  if (telemetry) shutdown.register("telemetry", () => telemetry.release());
}
