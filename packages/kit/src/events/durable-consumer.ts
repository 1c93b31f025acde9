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
import type { Logger } from "pino";
import type { Registry } from "prom-client";
import { METRICS, metricConfig } from "../telemetry/metric-catalog.js";
import { sampledGauge } from "../telemetry/metrics.js";
import { ensureStreams, type NatsConnection, type StreamRoute } from "./nats.js";
import { createWakeLoop } from "./wake-loop.js";

/** What becomes of one message once handled: acked, terminated (never again) or redelivered later. */
export type MessageOutcome = "ack" | "term" | { nakMs: number };

/** A durable pull consumer of a stream, run in every replica of its process (they share the work). */
export type DurableConsumer = { start(): void; stop(): Promise<void> };

export type DurableConsumerOptions<T> = {
  nc: NatsConnection;
  /** The stream read, all of its subjects (`<prefix>.>`). */
  route: StreamRoute;
  /** The consumer's durable name (its NATS permissions name it). */
  durable: string;
  /**
   * The subjects it takes, relative to the route's prefix (`*.subject.erasure_requested`); every
   * subject of the stream when absent.
   */
  filter?: string;
  logger: Logger;
  /** A message not acked within this time is delivered again (to this or another replica). */
  ackWaitMs: number;
  /** Messages handed out and not yet acked, across the replicas. */
  maxAckPending?: number;
  /** The most messages handled at once. */
  batch: number;
  /**
   * What the handler takes of a message, or null when it can never be handled: such a message is
   * logged and terminated rather than redelivered forever.
   */
  decode: (message: JsMsg) => T | null;
  /**
   * Handles what has arrived (up to `batch`, in order) and answers each one's outcome, or nothing
   * to ack them all. A throw hands every message held back (nak) and consumption starts again
   * after a backoff: the store behind it is failing.
   */
  handle: (values: T[]) => Promise<MessageOutcome[] | undefined>;
  /** Where the consumer's backlog is sampled (`evalp_jetstream_consumer_*`), at each scrape. */
  metrics?: Registry;
};

/** How soon a message handed back is delivered again. */
const REDELIVER_MS = 1_000;
/** A pause before looking at the consumer again when its messages ended on their own. */
const RECHECK_MS = 250;

/**
 * Consumes a stream with a durable consumer, created or updated idempotently before consuming
 * and again whenever it or its stream went away (deleted, a server started empty). Whatever has
 * arrived is handled in one go, so a burst takes few transactions and a lone message is not
 * kept waiting; messages are acked only after their handling, so a crash at any moment loses
 * nothing (handlers must tolerate a redelivery).
 */
export function createDurableConsumer<T>(options: DurableConsumerOptions<T>): DurableConsumer {
  const { stream, prefix } = options.route;
  const log = options.logger;
  let stopping = false;
  let messages: ConsumerMessages | null = null;
  let ready = false;

  async function ensureConsumer(): Promise<void> {
    await ensureStreams(options.nc, [options.route]);
    const jsm = await jetstreamManager(options.nc);
    const settings = {
      ack_wait: nanos(options.ackWaitMs),
      filter_subject: `${prefix}.${options.filter ?? ">"}`,
      ...(options.maxAckPending === undefined ? {} : { max_ack_pending: options.maxAckPending }),
    };
    try {
      await jsm.consumers.info(stream, options.durable);
      await jsm.consumers.update(stream, options.durable, settings);
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.ConsumerNotFound))
        throw error;
      await jsm.consumers.add(stream, {
        durable_name: options.durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ...settings,
      });
    }
  }

  function decoded(message: JsMsg): T | null {
    try {
      return options.decode(message);
    } catch {
      return null;
    }
  }

  /** One batch: the refused terminated, the rest handled and settled; throws when handling did. */
  async function handleBatch(taken: JsMsg[], held: () => JsMsg[]): Promise<void> {
    const usable: JsMsg[] = [];
    const values: T[] = [];
    for (const message of taken) {
      const value = decoded(message);
      if (value === null) {
        log.error(
          { subject: message.subject, seq: message.seq, bytes: message.data.length },
          "message refused",
        );
        // Without a reason: NATS servers before 2.10 ignore a `+TERM <reason>` (it stays unacked).
        message.term();
        continue;
      }
      usable.push(message);
      values.push(value);
    }
    if (values.length === 0) return;
    let outcomes: MessageOutcome[] | undefined;
    try {
      outcomes = await options.handle(values);
    } catch (error) {
      for (const message of [...usable, ...held()]) message.nak(REDELIVER_MS);
      throw error;
    }
    for (const [index, message] of usable.entries()) settle(message, outcomes?.[index] ?? "ack");
  }

  async function consume(): Promise<void> {
    const consumer = await jetstream(options.nc).consumers.get(stream, options.durable);
    const current = await consumer.consume({ max_messages: options.batch });
    messages = current;
    if (stopping) current.stop();
    // A consumer or stream that disappears ends this round; the next one creates it again rather
    // than waiting for it forever.
    void (async () => {
      for await (const status of current.status()) {
        if (["consumer_deleted", "consumer_not_found", "stream_not_found"].includes(status.type)) {
          log.warn({ status: status.type }, "durable consumer lost its consumer; recreating it");
          current.stop();
        }
      }
    })().catch(() => {});
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
        try {
          await handleBatch(buffer.splice(0, options.batch), () => buffer.splice(0));
        } catch (error) {
          current.stop();
          throw error;
        }
      }
    } finally {
      await pump.catch(() => {});
    }
  }

  const loop = createWakeLoop({
    logger: log,
    failure: "durable consumer stopped; starting again",
    intervalMs: RECHECK_MS,
    onError: () => {
      ready = false;
    },
    async pass() {
      if (!ready) {
        await ensureConsumer();
        ready = true;
      }
      await consume();
      // The messages ended on their own (the consumer went away): check it before going on.
      ready = false;
      return RECHECK_MS;
    },
  });

  const unobserve = options.metrics ? observeBacklog(options.metrics, options) : () => {};
  return {
    start: () => loop.start(),
    async stop() {
      stopping = true;
      unobserve();
      messages?.stop();
      await loop.stop();
    },
  };
}

/**
 * The consumer's backlog as JetStream counts it, asked at each scrape (one request to the
 * server): `evalp_jetstream_consumer_pending_messages` (in the stream, not yet handed out: work
 * waiting) and `evalp_jetstream_consumer_ack_pending_messages` (handed out, not yet acked), by
 * stream and consumer. Every replica reports the same (shared) consumer. Absent while the
 * consumer or NATS cannot be reached.
 */
function observeBacklog<T>(registry: Registry, options: DurableConsumerOptions<T>): () => void {
  const labels = { stream: options.route.stream, consumer: options.durable };
  let info: Promise<{ num_pending: number; num_ack_pending: number }> | null = null;
  // Both gauges of one scrape share one request.
  const read = () => {
    info ??= jetstreamManager(options.nc)
      .then((jsm) => jsm.consumers.info(options.route.stream, options.durable))
      .finally(() => {
        setTimeout(() => {
          info = null;
        }, 1_000).unref();
      });
    return info;
  };
  const removals = [
    sampledGauge(registry, metricConfig(METRICS.consumerPending), async () => [
      { labels, value: (await read()).num_pending },
    ]),
    sampledGauge(registry, metricConfig(METRICS.consumerAckPending), async () => [
      { labels, value: (await read()).num_ack_pending },
    ]),
  ];
  return () => {
    for (const remove of removals) remove();
  };
}

function settle(message: JsMsg, outcome: MessageOutcome): void {
  if (outcome === "ack") message.ack();
  else if (outcome === "term") message.term();
  else message.nak(outcome.nakMs);
}
