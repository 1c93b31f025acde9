import {
  AUDIT_CONSUMER,
  type AuditRecord,
  ensureStreams,
  type Logger,
  type NatsConnection,
  type Pool,
  parseAuditRecord,
  type StreamRoute,
} from "@evalp/kit";
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { insertAuditRecord } from "./db/audit.js";

/** Postgres: the record names an organization that does not exist. */
const FOREIGN_KEY_VIOLATION = "23503";

/** The audit record `data` holds, when it is one and its subject (`<prefix>.<organization>`) is its organization's. */
function audited(subject: string, data: Uint8Array): AuditRecord | null {
  let record: AuditRecord | null;
  try {
    record = parseAuditRecord(JSON.parse(new TextDecoder().decode(data)));
  } catch {
    return null;
  }
  return record && subject.endsWith(`.${record.organization_id}`) ? record : null;
}

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
      const record = audited(message.subject, message.data);
      if (!record) {
        // Not an audit record of its subject: storing it can never succeed, and it is not retried.
        log.error({ subject: message.subject, bytes: message.data.length }, "audit message refused");
        message.term();
        continue;
      }
      try {
        await insertAuditRecord(options.pool, record);
        message.ack();
      } catch (error) {
        if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) {
          log.error({ organization_id: record.organization_id }, "audit record of no organization refused");
          message.term();
          continue;
        }
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
