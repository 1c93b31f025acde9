import {
  AUDIT_CONSUMER,
  type AuditRecord,
  ensureStreams,
  type Logger,
  type NatsConnection,
  type Pool,
  type StreamRoute,
} from "@evalp/kit";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { insertAuditRecord } from "./db/audit.js";

/** Stores audit records published by the other planes; runs in every control replica (they share the work). */
export type AuditConsumer = { start(): Promise<void>; stop(): Promise<void> };

/**
 * Consumes the `AUDIT` stream with a durable consumer and stores each record in the audit
 * trail, acking only after the insert committed. Records are stored by id, so one delivered
 * twice (after a crash between insert and ack) is stored once.
 */
export function createAuditConsumer(options: {
  pool: Pool;
  nc: NatsConnection;
  route: StreamRoute;
  logger: Logger;
}): AuditConsumer {
  const log = options.logger.child({ component: "audit-consumer" });
  let stopped = false;
  let stopCurrent: (() => void) | null = null;
  let loop: Promise<void> | null = null;

  async function consumeOnce(): Promise<void> {
    await ensureStreams(options.nc, [options.route]);
    const jsm = await jetstreamManager(options.nc);
    await jsm.consumers.add(options.route.stream, {
      durable_name: AUDIT_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${options.route.prefix}.>`,
      ack_wait: 30_000_000_000,
    });
    const consumer = await jetstream(options.nc).consumers.get(options.route.stream, AUDIT_CONSUMER);
    const messages = await consumer.consume({ max_messages: 64 });
    stopCurrent = () => void messages.stop();
    for await (const message of messages) {
      try {
        await insertAuditRecord(options.pool, message.json<AuditRecord>());
        message.ack();
      } catch (error) {
        log.warn({ err: error }, "audit record not stored; redelivering");
        message.nak(1_000);
      }
    }
  }

  async function run(): Promise<void> {
    while (!stopped) {
      try {
        await consumeOnce();
      } catch (error) {
        log.warn({ err: error }, "audit consumer restarting");
      }
      if (!stopped) await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  return {
    async start() {
      loop = run();
    },
    async stop() {
      stopped = true;
      stopCurrent?.();
      await loop;
    },
  };
}
