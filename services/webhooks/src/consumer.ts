import {
  EVENTS_CONSUMER,
  type EventEnvelope,
  ensureStreams,
  type Logger,
  type NatsConnection,
  newId,
  type Pool,
  type StreamRoute,
  withTransaction,
} from "@evalp/kit";
import {
  AckPolicy,
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JsMsg,
  jetstream,
  jetstreamManager,
} from "@nats-io/jetstream";
import { nanos } from "@nats-io/transport-node";
import { eventBody, isEnvelope } from "./event-body.js";

/** A message not acked within this time is delivered again (to this or another replica). */
const ACK_WAIT_MS = 10_000;
/** Messages handed to this plane and not yet acked, across its replicas. */
const MAX_ACK_PENDING = 1_000;
const BATCH = 256;

export type EventConsumer = { start(): Promise<void>; stop(): Promise<void> };

type Endpoint = { id: string; environment_id: string; event_types: string[]; created_at: Date };

/**
 * Consumes the events stream with a durable consumer (created or updated idempotently at start)
 * and turns each event into one delivery per matching enabled endpoint (`event_types` naming its
 * type, or `*`) that existed when the event was emitted. Messages are taken in batches: one transaction stores the events and their
 * deliveries, and only after it commits are the messages acked, so a crash at any moment loses
 * nothing and a redelivered message finds its deliveries already there (unique per endpoint and
 * event).
 */
export function createEventConsumer(options: {
  nc: NatsConnection;
  pool: Pool;
  logger: Logger;
  route: StreamRoute;
  /** Called after deliveries were stored: the dispatcher has work. */
  onStored: () => void;
}): EventConsumer {
  const log = options.logger.child({ component: "event-consumer" });
  const { stream, prefix } = { stream: options.route.stream, prefix: options.route.prefix };
  let stopped = false;
  let messages: ConsumerMessages | null = null;
  let loop: Promise<void> | null = null;

  async function ensureConsumer(): Promise<void> {
    await ensureStreams(options.nc, [options.route]);
    const jsm = await jetstreamManager(options.nc);
    const config = {
      durable_name: EVENTS_CONSUMER,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: `${prefix}.>`,
      ack_wait: nanos(ACK_WAIT_MS),
      max_ack_pending: MAX_ACK_PENDING,
    };
    try {
      await jsm.consumers.info(stream, EVENTS_CONSUMER);
      await jsm.consumers.update(stream, EVENTS_CONSUMER, {
        ack_wait: config.ack_wait,
        max_ack_pending: config.max_ack_pending,
        filter_subject: config.filter_subject,
      });
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound))
        throw error;
      await jsm.consumers.add(stream, config);
    }
  }

  async function store(batch: JsMsg[]): Promise<void> {
    const events = new Map<string, EventEnvelope>();
    const usable: JsMsg[] = [];
    for (const message of batch) {
      let event: unknown;
      try {
        event = message.json();
      } catch {
        event = null;
      }
      if (!isEnvelope(event)) {
        // Never deliverable: dropped loudly rather than redelivered forever.
        log.error({ subject: message.subject, seq: message.seq }, "event message is not an event envelope");
        message.term("not an event envelope");
        continue;
      }
      events.set(event.id, event);
      usable.push(message);
    }
    if (events.size > 0) await storeEvents([...events.values()]);
    for (const message of usable) message.ack();
    if (events.size > 0) options.onStored();
  }

  async function storeEvents(events: EventEnvelope[]): Promise<void> {
    await withTransaction(options.pool, async (tx) => {
      const environments = [...new Set(events.map((event) => event.environment_id))];
      const endpoints = await tx.query<Endpoint>(
        `SELECT id, environment_id, event_types, created_at FROM webhook_endpoints
         WHERE environment_id = ANY($1::uuid[]) AND disabled_at IS NULL AND deleted_at IS NULL
         ORDER BY created_at, id`,
        [environments],
      );
      const deliveries: { id: string; environment: string; endpoint: string; event: string; type: string }[] =
        [];
      const delivered = new Map<string, EventEnvelope>();
      for (const event of events) {
        const emittedAt = Date.parse(event.timestamp);
        for (const endpoint of endpoints.rows) {
          if (endpoint.environment_id !== event.environment_id) continue;
          // An endpoint hears the events emitted since it exists, however late they are consumed.
          if (endpoint.created_at.getTime() > emittedAt) continue;
          if (!endpoint.event_types.includes("*") && !endpoint.event_types.includes(event.type)) continue;
          delivered.set(event.id, event);
          deliveries.push({
            id: newId(),
            environment: event.environment_id,
            endpoint: endpoint.id,
            event: event.id,
            type: event.type,
          });
        }
      }
      // An event nobody subscribes to is acked and not kept.
      if (deliveries.length === 0) return;
      const kept = [...delivered.values()];
      await tx.query(
        `INSERT INTO webhook_events (id, environment_id, event_type, body, created_at)
         SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[])
         ON CONFLICT (id) DO NOTHING`,
        [
          kept.map((event) => event.id),
          kept.map((event) => event.environment_id),
          kept.map((event) => event.type),
          kept.map(eventBody),
          kept.map((event) => event.timestamp),
        ],
      );
      await tx.query(
        `INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, next_attempt_at)
         SELECT d.*, now() FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::text[]) AS d
         ON CONFLICT ON CONSTRAINT webhook_deliveries_once DO NOTHING`,
        [
          deliveries.map((d) => d.id),
          deliveries.map((d) => d.environment),
          deliveries.map((d) => d.endpoint),
          deliveries.map((d) => d.event),
          deliveries.map((d) => d.type),
        ],
      );
    });
  }

  async function consume(): Promise<void> {
    const consumer = await jetstream(options.nc).consumers.get(stream, EVENTS_CONSUMER);
    const current = await consumer.consume({ max_messages: BATCH });
    messages = current;
    if (stopped) current.stop();
    // A consumer or stream that disappears (deleted, a server started empty) is created again by
    // the outer loop rather than waited for forever.
    void (async () => {
      for await (const status of current.status()) {
        if (["consumer_deleted", "consumer_not_found", "stream_not_found"].includes(status.type)) {
          log.warn({ status: status.type }, "event consumer lost its consumer; recreating it");
          current.stop();
        }
      }
    })().catch(() => {});
    // The iterator fills a buffer; each transaction takes whatever has arrived (up to a batch),
    // so a burst is stored in few transactions and a lone event is not kept waiting.
    const buffer: JsMsg[] = [];
    const waiting: { wake: (() => void) | null } = { wake: null };
    let ended = false;
    const pump = (async () => {
      try {
        for await (const message of current) {
          buffer.push(message);
          waiting.wake?.();
        }
      } finally {
        ended = true;
        waiting.wake?.();
      }
    })();
    try {
      while (!ended || buffer.length > 0) {
        if (buffer.length === 0) {
          await new Promise<void>((resolve) => {
            waiting.wake = resolve;
          });
          waiting.wake = null;
          continue;
        }
        const taken = buffer.splice(0, BATCH);
        try {
          await store(taken);
        } catch (error) {
          // Postgres is unreachable or failing: hand the messages back for a later try.
          for (const held of [...taken, ...buffer.splice(0)]) held.nak(1_000);
          current.stop();
          throw error;
        }
      }
    } finally {
      await pump.catch(() => {});
    }
  }

  async function run(): Promise<void> {
    let backoff = 0;
    let ready = false;
    while (!stopped) {
      try {
        if (!ready) {
          await ensureConsumer();
          ready = true;
        }
        await consume();
        backoff = 0;
        if (!stopped) {
          // The iterator ended on its own (its consumer went away): check the consumer, then go on.
          ready = false;
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
      } catch (error) {
        if (stopped) break;
        ready = false;
        backoff = Math.min(Math.max(backoff * 2, 100), 5_000);
        log.warn({ err: error, retry_in_ms: backoff }, "event consumer stopped; starting again");
        await new Promise((resolve) => setTimeout(resolve, backoff));
      }
    }
  }

  return {
    async start() {
      loop ??= run();
    },
    async stop() {
      stopped = true;
      messages?.stop();
      await loop;
    },
  };
}
