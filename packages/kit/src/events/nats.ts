import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
} from "@nats-io/jetstream";
import { connect, errors, type NatsConnection, nanos } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { type Config, ConfigError } from "../config/config.js";
import { natsInboxPrefix } from "./nats-permissions.js";

export type { NatsConnection } from "@nats-io/transport-node";

/**
 * Where outbox rows of one subject root go: rows whose subject is `<root>.<rest>` are published
 * on `<prefix>.<rest>` into `stream`, which holds `<prefix>.>`. In production `prefix` is the
 * root itself; tests give every stack its own prefix and stream, since JetStream forbids two
 * streams with overlapping subjects.
 */
export type StreamRoute = {
  stream: string;
  root: string;
  prefix: string;
  replicas?: number;
  /** The stream's size limit; past it, publishes are refused (default DEFAULT_STREAM_MAX_BYTES). */
  maxBytes?: number;
  /** How long the stream keeps a message (default DEFAULT_STREAM_MAX_AGE_MS). */
  maxAgeMs?: number;
};

const DAY_MS = 24 * 60 * 60 * 1000;

/** A stream's limits from its settings (`<STREAM>_MAX_BYTES`, `<STREAM>_MAX_AGE_DAYS`). */
export function streamLimits(
  maxBytes: number,
  maxAgeDays: number,
): Pick<StreamRoute, "maxBytes" | "maxAgeMs"> {
  return { maxBytes, maxAgeMs: Math.round(maxAgeDays * DAY_MS) };
}

/** The root of event subjects, `events.<environment_id>.<type>` (docs/webhooks.md). */
export const EVENTS_ROOT = "events";
/** The root of the webhooks plane's own subjects (`webhooks.dead_letter`). */
export const WEBHOOKS_ROOT = "webhooks";

/** The route of events into the `EVENTS` stream, as configured. */
export function eventsRoute(
  config: Pick<
    Config,
    | "EVENTS_STREAM"
    | "EVENTS_SUBJECT_PREFIX"
    | "NATS_STREAM_REPLICAS"
    | "EVENTS_STREAM_MAX_BYTES"
    | "EVENTS_STREAM_MAX_AGE_DAYS"
  >,
): StreamRoute {
  return {
    stream: config.EVENTS_STREAM,
    root: EVENTS_ROOT,
    prefix: config.EVENTS_SUBJECT_PREFIX,
    replicas: config.NATS_STREAM_REPLICAS,
    ...streamLimits(config.EVENTS_STREAM_MAX_BYTES, config.EVENTS_STREAM_MAX_AGE_DAYS),
  };
}

/** The route of the webhooks plane's own messages (dead letters), as configured. */
export function webhooksRoute(
  config: Pick<
    Config,
    | "WEBHOOKS_STREAM"
    | "WEBHOOKS_SUBJECT_PREFIX"
    | "NATS_STREAM_REPLICAS"
    | "WEBHOOKS_STREAM_MAX_BYTES"
    | "WEBHOOKS_STREAM_MAX_AGE_DAYS"
  >,
): StreamRoute {
  return {
    stream: config.WEBHOOKS_STREAM,
    root: WEBHOOKS_ROOT,
    prefix: config.WEBHOOKS_SUBJECT_PREFIX,
    replicas: config.NATS_STREAM_REPLICAS,
    ...streamLimits(config.WEBHOOKS_STREAM_MAX_BYTES, config.WEBHOOKS_STREAM_MAX_AGE_DAYS),
  };
}

/** The subject a row of `subject` is published on under `route` (the root swapped for the prefix). */
export function routedSubject(route: StreamRoute, subject: string): string {
  return `${route.prefix}${subject.slice(route.root.length)}`;
}

/** How long a stream keeps messages by default: long enough to outlive any outage of a consumer. */
export const DEFAULT_STREAM_MAX_AGE_MS = 7 * DAY_MS;
/** A stream's size limit by default (the settings' default for EVENTS and AUDIT). */
export const DEFAULT_STREAM_MAX_BYTES = 1024 ** 3;
/** Within this window JetStream drops a second message with the same `Nats-Msg-Id`. */
const DUPLICATE_WINDOW_MS = 2 * 60 * 1000;

/** Where and as whom a process connects to NATS. */
export type NatsSettings = Pick<Config, "NATS_URL" | "NATS_USER" | "NATS_PASSWORD"> &
  Partial<Pick<Config, "NODE_ENV">>;

/**
 * A connection that never gives up: it waits for a server that is not up yet and reconnects
 * forever, so a NATS restart is an interruption, not an outage of the process. Status changes
 * are logged. With a user, replies come to that user's own inbox prefix (the only inboxes its
 * permissions let it read); in production a process without one does not start (thrown at once,
 * before any connection is tried).
 */
export function connectNats(settings: NatsSettings, name: string, logger: Logger): Promise<NatsConnection> {
  if (settings.NODE_ENV === "production" && !settings.NATS_USER) {
    throw new ConfigError("NATS_USER and NATS_PASSWORD are required when NODE_ENV=production");
  }
  const credentials = settings.NATS_USER
    ? {
        user: settings.NATS_USER,
        pass: settings.NATS_PASSWORD,
        inboxPrefix: natsInboxPrefix(settings.NATS_USER),
      }
    : {};
  return connect({
    servers: settings.NATS_URL,
    name,
    ...credentials,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    waitOnFirstConnect: true,
    pingInterval: 10_000,
    // Otherwise every request (each JetStream publish among them) builds two Errors to capture
    // where it started, a stack walk per event published: a timeout's error still says what timed
    // out, only not from which line.
    noAsyncTraces: true,
  }).then((nc) => {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === "error") {
          // A permission refused is a defect of this process's code or of the layout: loud.
          const refused = status.error instanceof errors.PermissionViolationError;
          logger[refused ? "error" : "info"](
            { nats: status.type, err: status.error },
            "nats connection status",
          );
        } else if (status.type === "disconnect" || status.type === "reconnect") {
          logger.info({ nats: status.type }, "nats connection status");
        }
      }
    })();
    return nc;
  });
}

/**
 * Creates each route's stream when missing (file storage, limits retention with the route's
 * `maxAgeMs` and `maxBytes`, discard policy `new`, a 2-minute duplicate window for
 * `Nats-Msg-Id`, the route's replicas), and brings an existing one to the route: its subjects
 * widened when they differ, its replica count, limits and discard policy the route's.
 * Safe to run from every process at every start.
 *
 * Discard `new`: a full stream refuses the publish (JetStream error 10077, "maximum bytes
 * exceeded") instead of dropping its oldest messages, which may not have been delivered yet. The
 * outbox relay then leaves the rows unpublished and tries again, so nothing is lost while the
 * stream is full: events wait in Postgres until messages age out or the limit is raised.
 */
export async function ensureStreams(nc: NatsConnection, routes: StreamRoute[]): Promise<void> {
  const jsm = await jetstreamManager(nc);
  for (const route of routes) await ensureStream(jsm, route);
}

/** The limits a route's stream is created with and brought to. */
function limitsOf(route: StreamRoute) {
  return {
    num_replicas: route.replicas ?? 1,
    max_bytes: route.maxBytes ?? DEFAULT_STREAM_MAX_BYTES,
    max_age: nanos(route.maxAgeMs ?? DEFAULT_STREAM_MAX_AGE_MS),
    discard: DiscardPolicy.New,
  };
}

async function ensureStream(jsm: JetStreamManager, route: StreamRoute): Promise<void> {
  const subjects = [`${route.prefix}.>`];
  const limits = limitsOf(route);
  try {
    const info = await jsm.streams.info(route.stream);
    const widen = !subjects.every((subject) => info.config.subjects?.includes(subject));
    // Raising NATS_STREAM_REPLICAS or a limit on a running cluster must reach the streams that exist.
    const differs =
      info.config.num_replicas !== limits.num_replicas ||
      info.config.max_bytes !== limits.max_bytes ||
      info.config.max_age !== limits.max_age ||
      info.config.discard !== limits.discard;
    if (widen || differs) {
      await jsm.streams.update(route.stream, {
        subjects: widen ? [...(info.config.subjects ?? []), ...subjects] : info.config.subjects,
        ...limits,
      });
    }
    return;
  } catch (error) {
    if (!isStreamNotFound(error)) throw error;
  }
  try {
    await jsm.streams.add({
      name: route.stream,
      subjects,
      retention: RetentionPolicy.Limits,
      storage: StorageType.File,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
      ...limits,
    });
  } catch (error) {
    // Another process created it in the meantime; make sure it is there.
    await jsm.streams.info(route.stream).catch(() => {
      throw error;
    });
  }
}

function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/** Readiness of a NATS connection: open and answering a round trip. */
export async function pingNats(nc: NatsConnection): Promise<void> {
  if (nc.isClosed()) throw new Error("nats connection closed");
  await nc.flush();
}
