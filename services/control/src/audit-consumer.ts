import {
  AUDIT_CONSUMER,
  type AuditRecord,
  createDurableConsumer,
  type DurableConsumer,
  type Logger,
  type MessageOutcome,
  type NatsConnection,
  type Pool,
  parseAuditRecord,
  type Registry,
  type StreamRoute,
} from "@evalp/kit";
import { insertAuditRecord } from "./db/audit.js";

/** Postgres: the record names an organization that does not exist. */
const FOREIGN_KEY_VIOLATION = "23503";

/** The audit record `data` holds, when it is one and its subject (`<prefix>.<organization>`) is its organization's. */
function audited(subject: string, data: Uint8Array): AuditRecord | null {
  const record = parseAuditRecord(JSON.parse(new TextDecoder().decode(data)));
  return record && subject.endsWith(`.${record.organization_id}`) ? record : null;
}

/**
 * Consumes the `AUDIT` stream with a durable consumer and stores each record in the audit trail,
 * acking only after the insert committed; runs in every control replica (they share the work).
 * Records are stored by id, so one delivered twice (after a crash between insert and ack) is
 * stored once. A message that is not an audit record of its subject, or whose organization does
 * not exist, can never be stored and is not retried.
 */
export function createAuditConsumer(options: {
  pool: Pool;
  nc: NatsConnection;
  route: StreamRoute;
  logger: Logger;
  /** Where the consumer's backlog is sampled. */
  metrics?: Registry;
}): DurableConsumer {
  const log = options.logger.child({ component: "audit-consumer" });
  return createDurableConsumer<AuditRecord>({
    nc: options.nc,
    route: options.route,
    durable: AUDIT_CONSUMER,
    logger: log,
    ackWaitMs: 30_000,
    batch: 64,
    ...(options.metrics && { metrics: options.metrics }),
    decode: (message) => audited(message.subject, message.data),
    async handle(records) {
      const outcomes: MessageOutcome[] = [];
      for (const record of records) {
        try {
          await insertAuditRecord(options.pool, record);
          outcomes.push("ack");
        } catch (error) {
          if ((error as { code?: unknown }).code === FOREIGN_KEY_VIOLATION) {
            log.error({ organization_id: record.organization_id }, "audit record of no organization refused");
            outcomes.push("term");
          } else {
            log.warn({ err: error }, "audit record not stored; redelivering");
            outcomes.push({ nakMs: 1_000 });
          }
        }
      }
      return outcomes;
    },
  });
}
