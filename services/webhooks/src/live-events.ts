import { randomUUID } from "node:crypto";
import { AppError, type Logger, MAX_EVENT_BYTES, type NatsConnection, type StreamRoute } from "@evalp/kit";
import { DeliverPolicy, type JsMsg, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { eventBody, isEnvelope } from "./event-body.js";

/** A sign of life is sent after this long without an event, so a quiet stream is told from a dead one. */
export const LIVE_HEARTBEAT_MS = 15_000;
/**
 * The most events held for a listener that reads them slower than they are published; past it the
 * stream ends (`resource_exhausted`) rather than this process holding an unbounded backlog.
 */
const MAX_WAITING = 1_000;
/** An event type as the catalog writes them: never a NATS wildcard or separator of its own. */
const EVENT_TYPE = /^[a-z][a-z_]*(\.[a-z][a-z_]*)+$/;

/** An environment's events as they are published, for `evalp listen`. */
export type LiveEvents = {
  /**
   * The bodies of the environment's events (only those of `types`, unless empty) published from
   * now on, each exactly as a delivery sends it, with `""` as a heartbeat at once (the stream is
   * open) and after LIVE_HEARTBEAT_MS of silence; until `signal` aborts.
   */
  follow(environmentId: string, types: readonly string[], signal: AbortSignal): AsyncGenerator<string>;
  /** Ends every stream (the process is stopping: its server waits for them) and refuses new ones. */
  close(): void;
};

/** Whether `type` can name an event type in a subject filter (no wildcard, no empty token). */
export function isEventTypeName(type: string): boolean {
  return EVENT_TYPE.test(type);
}

/**
 * Follows the events stream with one ordered consumer per listener (ephemeral, in memory, no
 * acknowledgements, gone when the listener is), filtered to the environment's subjects (or its
 * one type's) and
 * started after the stream's last message. Nothing from the stream is trusted: a message is
 * relayed only when it parses as an envelope of that environment, whose type is its subject's,
 * within the size any event may have; anything else is logged and dropped.
 */
export function createLiveEvents(options: {
  nats: () => NatsConnection | null;
  route: StreamRoute;
  logger: Logger;
  heartbeatMs?: number;
}): LiveEvents {
  const { route } = options;
  const heartbeatMs = options.heartbeatMs ?? LIVE_HEARTBEAT_MS;
  const logger = options.logger.child({ component: "live-events" });
  const open = new Set<() => void>();
  let closed = false;

  /** The body to relay of a message on the environment's subjects, or null when it is not one. */
  function relayable(message: JsMsg, environmentId: string, types: ReadonlySet<string>): string | null {
    const refuse = (reason: string) => {
      logger.warn({ subject: message.subject, reason }, "stream message not relayed to a listener");
      return null;
    };
    if (message.data.length > MAX_EVENT_BYTES) return refuse("too large");
    let event: unknown;
    try {
      event = message.json();
    } catch {
      return refuse("not JSON");
    }
    if (!isEnvelope(event)) return refuse("not an event envelope");
    if (event.environment_id !== environmentId) return refuse("another environment's event");
    if (message.subject !== `${route.prefix}.${environmentId}.${event.type}`) {
      return refuse("its type is not its subject's");
    }
    if (types.size > 0 && !types.has(event.type)) return refuse("a type not asked for");
    return eventBody(event);
  }

  return {
    async *follow(environmentId, types, signal) {
      const nc = closed ? null : options.nats();
      if (!nc) throw new AppError("unavailable", "The event stream is not reachable yet.");
      // One filter subject (several need NATS 2.10): a single type's, else the environment's,
      // the types then picked here (`relayable`).
      const [only] = types;
      const filter =
        types.length === 1 && only !== undefined
          ? `${route.prefix}.${environmentId}.${only}`
          : `${route.prefix}.${environmentId}.>`;
      // From the message after the stream's last: a recreated consumer resumes where it was.
      const state = (await (await jetstreamManager(nc)).streams.info(route.stream)).state;
      const consumer = await jetstream(nc).consumers.get(route.stream, {
        name_prefix: `live-${randomUUID()}`,
        filter_subjects: filter,
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: state.last_seq + 1,
      });
      const messages = await consumer.consume({ max_messages: 64 });
      const wanted = new Set(types);
      // The first heartbeat says the stream is open: the caller may answer its client now.
      const waiting: string[] = [""];
      // Whoever waits for the next body: a field, so no closure narrows it away.
      const waiter: { wake: (() => void) | null } = { wake: null };
      let ended = false;
      let failure: unknown = null;
      let quiet = true;
      const push = (body: string) => {
        waiting.push(body);
        waiter.wake?.();
      };
      const stop = () => {
        messages.stop();
        waiter.wake?.();
      };
      signal.addEventListener("abort", stop, { once: true });
      open.add(stop);
      void (async () => {
        try {
          for await (const message of messages) {
            const body = relayable(message, environmentId, wanted);
            if (body === null) continue;
            quiet = false;
            if (waiting.length >= MAX_WAITING) {
              failure = new AppError("rate_limited", "The listener reads events slower than they come.");
              messages.stop();
              break;
            }
            push(body);
          }
        } catch (error) {
          failure = error;
        } finally {
          ended = true;
          waiter.wake?.();
        }
      })();
      const beat = setInterval(() => {
        if (quiet && waiting.length === 0) push("");
        quiet = true;
      }, heartbeatMs);
      try {
        for (;;) {
          const next = waiting.shift();
          if (next !== undefined) {
            yield next;
            continue;
          }
          if (ended || signal.aborted || closed) {
            if (failure !== null) throw failure;
            return;
          }
          await new Promise<void>((resolve) => {
            waiter.wake = resolve;
          });
          waiter.wake = null;
        }
      } finally {
        clearInterval(beat);
        signal.removeEventListener("abort", stop);
        open.delete(stop);
        messages.stop();
        // Ephemeral as it is, the consumer would linger until its inactivity threshold.
        await consumer.delete().catch(() => undefined);
      }
    },
    close() {
      closed = true;
      for (const stop of open) stop();
    },
  };
}
