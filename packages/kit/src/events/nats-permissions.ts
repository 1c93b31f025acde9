import type { Config } from "../config/config.js";

/** The NATS users of the platform: one per process, named after it. */
export const NATS_USERS = ["gateway", "control", "platform", "interview", "webhooks"] as const;
export type NatsUser = (typeof NATS_USERS)[number];

/** The durable consumers, by the stream they read: control stores audit records, webhooks delivers events. */
export const AUDIT_CONSUMER = "control-audit";
export const EVENTS_CONSUMER = "webhooks";
/**
 * The durable consumers of `subject.erasure_requested` events, one per plane that erases on it
 * (docs/subjects.md#erasure): each plane gets every erasure, whatever the others do.
 */
export const ERASURE_CONSUMERS = {
  interview: "interview-erasure",
  platform: "platform-erasure",
  webhooks: "webhooks-erasure",
} as const;

/** What a user may publish and subscribe to (nats-server `permissions`). */
export type NatsPermissions = {
  publish: { allow?: string[]; deny?: string[] };
  subscribe: { allow?: string[]; deny?: string[] };
};

export type NatsNames = Pick<
  Config,
  | "EVENTS_STREAM"
  | "EVENTS_SUBJECT_PREFIX"
  | "AUDIT_STREAM"
  | "AUDIT_SUBJECT_PREFIX"
  | "WEBHOOKS_STREAM"
  | "WEBHOOKS_SUBJECT_PREFIX"
  | "REALTIME_SUBJECT_PREFIX"
>;

/**
 * A user's own inbox prefix. Replies (JetStream API answers, publish acknowledgements, the
 * messages a pull consumer delivers) go to inboxes; with the shared `_INBOX.>` any user could read
 * every other's, audit records and events included.
 */
export function natsInboxPrefix(user: string): string {
  return `_INBOX_${user}`;
}

/** Reads and (idempotent) creation or update of the streams a process ensures at start (`ensureStreams`). */
function streamAdmin(streams: string[]): string[] {
  return [
    "$JS.API.INFO",
    ...streams.flatMap((stream) =>
      ["INFO", "CREATE", "UPDATE"].map((verb) => `$JS.API.STREAM.${verb}.${stream}`),
    ),
  ];
}

/**
 * Reading a durable pull consumer: creating or updating it (the subject with and without its
 * filter, and the pre-2.9 form), its info, pulling batches, and acknowledging (reply subjects in
 * the v1 `$JS.ACK.<stream>.<consumer>.…` and v2 `$JS.ACK.<domain>.<account>.<stream>.<consumer>.…` forms).
 */
function consumerOf(stream: string, consumer: string): string[] {
  return [
    `$JS.API.CONSUMER.CREATE.${stream}.${consumer}`,
    `$JS.API.CONSUMER.CREATE.${stream}.${consumer}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.${consumer}`,
    `$JS.API.CONSUMER.INFO.${stream}.${consumer}`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.${consumer}`,
    `$JS.ACK.${stream}.${consumer}.>`,
    `$JS.ACK.*.*.${stream}.${consumer}.>`,
  ];
}

/**
 * Ephemeral ordered consumers of a stream (the webhooks plane's listeners): creating one under any
 * name (with or without filters), pulling from it and deleting it. `others` are durables that must
 * stay out of reach (another plane's): denied, since a name wildcard cannot exclude them.
 */
function orderedConsumersOf(stream: string, others: string[]): NatsPermissions["publish"] {
  return {
    allow: [
      `$JS.API.CONSUMER.CREATE.${stream}.*`,
      `$JS.API.CONSUMER.CREATE.${stream}.*.>`,
      `$JS.API.CONSUMER.INFO.${stream}.*`,
      `$JS.API.CONSUMER.MSG.NEXT.${stream}.*`,
      `$JS.API.CONSUMER.DELETE.${stream}.*`,
    ],
    deny: others.flatMap((name) => [
      `$JS.API.CONSUMER.*.${stream}.${name}`,
      `$JS.API.CONSUMER.*.${stream}.${name}.>`,
    ]),
  };
}

/**
 * Every user's permissions: each process may publish only what it emits and read only what it
 * consumes, and nothing else (a user not listed may not connect at all). The one layout the
 * production NATS (deploy/k8s) and the test servers run.
 *
 * - gateway: reads realtime frames; publishes nothing.
 * - control: emits events; consumes the audit stream (it stores every plane's audit records).
 * - platform: emits events and audit records; consumes subject erasures from the events stream.
 * - interview: emits events and realtime frames; consumes subject erasures from the events stream.
 * - webhooks: emits events (`webhook.endpoint_disabled`, triggered samples), dead letters and
 *   audit records; consumes the events stream (deliveries), and follows it with ephemeral ordered
 *   consumers for listeners (never touching the other planes' durables on it).
 *
 * Each process that relays an outbox ensures the streams of all its routes (events, audit, and
 * for webhooks its own), so it may create and update those, and no other.
 */
export function natsPermissions(names: NatsNames): Record<NatsUser, NatsPermissions> {
  const events = `${names.EVENTS_SUBJECT_PREFIX}.>`;
  const audit = `${names.AUDIT_SUBJECT_PREFIX}.>`;
  const realtime = `${names.REALTIME_SUBJECT_PREFIX}.*`;
  const relays = [names.EVENTS_STREAM, names.AUDIT_STREAM];
  const inbox = (user: NatsUser) => [`${natsInboxPrefix(user)}.>`];
  const listeners = orderedConsumersOf(names.EVENTS_STREAM, [
    ERASURE_CONSUMERS.platform,
    ERASURE_CONSUMERS.interview,
  ]);
  return {
    gateway: { publish: { deny: [">"] }, subscribe: { allow: [realtime] } },
    control: {
      publish: { allow: [events, ...streamAdmin(relays), ...consumerOf(names.AUDIT_STREAM, AUDIT_CONSUMER)] },
      subscribe: { allow: inbox("control") },
    },
    platform: {
      publish: {
        allow: [
          events,
          audit,
          ...streamAdmin(relays),
          ...consumerOf(names.EVENTS_STREAM, ERASURE_CONSUMERS.platform),
        ],
      },
      subscribe: { allow: inbox("platform") },
    },
    interview: {
      publish: {
        allow: [
          events,
          realtime,
          ...streamAdmin(relays),
          ...consumerOf(names.EVENTS_STREAM, ERASURE_CONSUMERS.interview),
        ],
      },
      subscribe: { allow: inbox("interview") },
    },
    webhooks: {
      publish: {
        allow: [
          events,
          `${names.WEBHOOKS_SUBJECT_PREFIX}.>`,
          audit,
          ...streamAdmin([...relays, names.WEBHOOKS_STREAM]),
          ...consumerOf(names.EVENTS_STREAM, EVENTS_CONSUMER),
          ...consumerOf(names.EVENTS_STREAM, ERASURE_CONSUMERS.webhooks),
          ...(listeners.allow ?? []),
        ],
        deny: listeners.deny ?? [],
      },
      subscribe: { allow: inbox("webhooks") },
    },
  };
}
