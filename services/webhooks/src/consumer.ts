import {
  contextFromNats,
  createDurableConsumer,
  type DurableConsumer,
  EVENTS_CONSUMER,
  type EventEnvelope,
  type Logger,
  type NatsConnection,
  newId,
  type Pool,
  type Registry,
  recordFailure,
  type StreamRoute,
  type TraceCarrier,
  traceCarrierOf,
  tracer,
  tracingActive,
} from "@evalp/kit";
import { type Context, context, type Span, SpanKind, trace } from "@opentelemetry/api";
import {
  endpointsWaiting,
  insertEventDeliveriesBeforeCommit,
  type NewDelivery,
  type StoredDeliveries,
} from "./db/deliveries.js";
import type { ClaimedDelivery } from "./db/delivery-attempts.js";
import {
  type EndpointSet,
  endpointSetsHold,
  previousSecretAt,
  readEndpointSets,
  type SubscribedEndpoint,
} from "./db/endpoint-sets.js";
import type { Dispatcher } from "./dispatcher.js";
import { endpointSetCache } from "./endpoint-set-cache.js";
import { eventBody, isEnvelope } from "./event-body.js";

/** A message not acked within this time is delivered again (to this or another replica). */
const ACK_WAIT_MS = 10_000;
/** Messages handed to this plane and not yet acked, across its replicas. */
const MAX_ACK_PENDING = 1_000;
const BATCH = 256;
/**
 * The most deliveries waiting in this worker's memory, per endpoint and overall; past them new
 * deliveries are left to claims, which wait in the table rather than in memory.
 */
const MAX_QUEUED_PER_ENDPOINT = 4_096;
const MAX_QUEUED = 32_768;
/**
 * Plans of one batch, each after a change of endpoints: the last is stored without the check, so
 * one tenant changing its endpoints as fast as batches are stored cannot hold back the batch.
 */
const STORE_PLANS = 3;

/**
 * Consumes the events stream with a durable consumer and turns each event into one delivery per
 * matching enabled endpoint (`event_types` naming its type, or `*`) that existed when the event
 * was emitted. One transaction stores a batch's events and their deliveries, and only after it
 * commits are the messages acked, so a crash at any moment loses nothing and a redelivered
 * message finds its deliveries already there (unique per endpoint and event).
 *
 * Each environment's endpoints are kept in memory between batches with their fingerprint (see
 * db/endpoint-sets.ts), and the statement that stores a batch stores it only if every fingerprint
 * still holds: a batch whose environments' endpoints did not change costs that one round trip,
 * and one planned from a set that changed, on any replica, is planned again from a new read.
 *
 * The deliveries are stored leased to this worker's dispatcher and handed to it in memory, so
 * that attempting them needs no query to find and claim them. An endpoint whose deliveries pile
 * up in memory (a slow receiver) has its next ones left to claims instead, and goes on so until
 * none of those waits any more, so that its deliveries are still attempted in the order stored.
 */
export function createEventConsumer(options: {
  nc: NatsConnection;
  pool: Pool;
  logger: Logger;
  route: StreamRoute;
  /** Who attempts the deliveries stored: handed over, or woken to claim them. */
  dispatcher: Pick<Dispatcher, "wake" | "storedLease" | "take" | "queued" | "queuedTotal">;
  /** Where the consumer's backlog is sampled. */
  metrics?: Registry;
}): DurableConsumer {
  const { dispatcher, pool } = options;
  /** Endpoints whose deliveries are left to claims, with when the first of those was stored. */
  const claimedFrom = new Map<string, Date>();

  /** Each environment's endpoint set as last read, checked by the store that relies on it. */
  const sets = endpointSetCache();

  /**
   * The batch's environments' endpoint sets: those kept in memory, the others read (all of them
   * read when `fresh`); and whether any came from memory.
   */
  async function endpointSetsOf(
    environmentIds: string[],
    fresh: boolean,
  ): Promise<{ known: Map<string, EndpointSet>; fromMemory: boolean }> {
    const known = new Map<string, EndpointSet>();
    for (const environmentId of environmentIds) {
      const set = fresh ? undefined : sets.get(environmentId);
      if (set) known.set(environmentId, set);
    }
    const fromMemory = known.size > 0;
    const missing = environmentIds.filter((environmentId) => !known.has(environmentId));
    if (missing.length > 0) {
      for (const [environmentId, set] of await readEndpointSets(pool, missing)) {
        sets.set(environmentId, set);
        known.set(environmentId, set);
      }
    }
    return { known, fromMemory };
  }

  /**
   * Plans the batch's deliveries from the endpoint sets in memory where it can, and stores them
   * with a check that those sets still hold; a set that changed is read again and the batch planned
   * again. The STORE_PLANS-th plan, made from a read just before it, is stored without the check:
   * what a store from a read was before sets were kept, and an endpoint changed between that read
   * and the store hears the batch as it was before the change. A plan without deliveries stores
   * nothing, so one made from memory is confirmed by the sets' fingerprints (a changed set is read).
   */
  async function store(batch: Traced[]): Promise<void> {
    const environmentIds = [...new Set(batch.map((entry) => entry.event.environment_id))];
    for (let plan = 1, fresh = false; ; plan++) {
      const { known, fromMemory } = await endpointSetsOf(environmentIds, fresh);
      const planned = planDeliveries(known, batch);
      if (planned.deliveries.length === 0) {
        // Sets kept in memory that plan nothing are confirmed before the batch is dropped: by
        // their fingerprints, which cost less than reading the sets again (the events of an
        // environment without endpoints come this way at every batch); a set that changed is read.
        if (!fromMemory || (await endpointSetsHold(pool, known))) return;
        fresh = true;
        continue;
      }
      if (await storePlanned(planned, plan < STORE_PLANS ? known : null)) return;
      sets.forget(environmentIds);
      fresh = true;
    }
  }

  /**
   * Stores a plan and hands its leased deliveries over; false, storing nothing, when a set of
   * `checked` no longer holds (never without sets to check).
   */
  async function storePlanned(planned: Planned, checked: Map<string, EndpointSet> | null): Promise<boolean> {
    const count = new Map<string, number>();
    for (const delivery of planned.deliveries) {
      count.set(delivery.endpointId, (count.get(delivery.endpointId) ?? 0) + 1);
    }
    // Endpoints left to claims come back once none of their claimable deliveries waits.
    const back = new Map(
      [...claimedFrom].filter(
        ([endpointId]) =>
          count.has(endpointId) && dispatcher.queued(endpointId) < MAX_QUEUED_PER_ENDPOINT / 2,
      ),
    );
    if (back.size > 0) {
      const waiting = await endpointsWaiting(pool, back);
      for (const endpointId of back.keys()) if (!waiting.has(endpointId)) claimedFrom.delete(endpointId);
    }
    let room = MAX_QUEUED - dispatcher.queuedTotal();
    const leased = new Set<string>();
    for (const [endpointId, n] of count) {
      if (
        claimedFrom.has(endpointId) ||
        dispatcher.queued(endpointId) + n > MAX_QUEUED_PER_ENDPOINT ||
        n > room
      )
        continue;
      leased.add(endpointId);
      room -= n;
    }
    for (const delivery of planned.deliveries) delivery.leased = leased.has(delivery.endpointId);
    const lease = dispatcher.storedLease();
    // The lease is counted from before the statement: it ends no sooner than this worker thinks.
    const leasedAt = performance.now();
    const { stored, committed } = await insertEventDeliveriesBeforeCommit(
      pool,
      planned.events,
      planned.deliveries,
      {
        lease,
        ...(checked && {
          planned: new Map([...checked].map(([environmentId, set]) => [environmentId, set.fingerprint])),
        }),
      },
    );
    if (stored.stale) {
      await committed;
      return false;
    }
    for (const [endpointId, since] of stored.unleasedSince) {
      if (!claimedFrom.has(endpointId)) claimedFrom.set(endpointId, since);
    }
    if (stored.leased.size > 0) handOver(planned, stored, lease, leasedAt, committed);
    // Acked only once durable: a store that did not commit throws, and its messages come again.
    await committed;
    // Claims see the deliveries left to them once committed.
    if (stored.unleasedSince.size > 0) dispatcher.wake();
    return true;
  }

  /**
   * Hands the deliveries stored leased to the dispatcher while their store commits: attempts
   * begin at once, and record nothing before it committed (dispatcher.ts).
   */
  function handOver(
    planned: Planned,
    stored: StoredDeliveries,
    lease: { token: string },
    leasedAt: number,
    committed: Promise<void>,
  ): void {
    const now = Date.now();
    const handed: ClaimedDelivery[] = [];
    for (const delivery of planned.deliveries) {
      if (!stored.leased.has(delivery.id)) continue;
      const endpoint = planned.endpoints.get(delivery.endpointId) as SubscribedEndpoint;
      handed.push({
        id: delivery.id,
        endpoint_id: delivery.endpointId,
        event_id: delivery.eventId,
        attempt_count: 0,
        series_start: 0,
        next_attempt_at: planned.storedAt,
        claim_token: lease.token,
        url: endpoint.url,
        secret: endpoint.secret,
        previous_secret: previousSecretAt(endpoint, now),
        endpoint_stopped: false,
        endpoint_deleted: false,
        endpoint_failing: stored.failing.has(delivery.endpointId),
        body: planned.bodies.get(delivery.eventId) as string,
        trace_context: delivery.traceContext,
      });
    }
    dispatcher.take(
      handed,
      leasedAt,
      committed.then(
        () => true,
        () => false,
      ),
    );
  }

  return createDurableConsumer<Consumed>({
    nc: options.nc,
    route: options.route,
    durable: EVENTS_CONSUMER,
    logger: options.logger.child({ component: "event-consumer" }),
    ackWaitMs: ACK_WAIT_MS,
    maxAckPending: MAX_ACK_PENDING,
    batch: BATCH,
    ...(options.metrics && { metrics: options.metrics }),
    decode: (message) => {
      const event: unknown = message.json();
      return isEnvelope(event)
        ? { event, subject: message.subject, trace: contextFromNats(message.headers) }
        : null;
    },
    async handle(batch) {
      const events = new Map(batch.map((consumed) => [consumed.event.id, consumed]));
      await consumeTraced([...events.values()], (traced) => store(traced));
      return undefined;
    },
  });
}

/** An event as received, with the trace its publisher sent along. */
type Consumed = { event: EventEnvelope; subject: string; trace: Context };
/** An event being stored, with the trace its deliveries continue. */
type Traced = { event: EventEnvelope; trace: TraceCarrier | null };

/**
 * Stores a batch with each event in a consumer span of its own under its publisher's, so each
 * event's trace goes on into its deliveries; the spans end once the batch is stored, and its
 * queries are traced under the first event's. Without tracing, just stores.
 */
async function consumeTraced(batch: Consumed[], store: (events: Traced[]) => Promise<void>): Promise<void> {
  const [first] = batch;
  if (!first || !tracingActive()) return store(batch.map(({ event }) => ({ event, trace: null })));
  const spans = batch.map(({ event, subject, trace: parent }) =>
    tracer.startSpan(
      `process ${event.type}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          "messaging.system": "nats",
          "messaging.operation.type": "process",
          "messaging.operation.name": "process",
          "messaging.destination.name": subject,
          "messaging.consumer.group.name": EVENTS_CONSUMER,
          "messaging.message.id": event.id,
        },
      },
      parent,
    ),
  );
  const contexts = batch.map(({ trace: parent }, index) => trace.setSpan(parent, spans[index] as Span));
  try {
    await context.with(contexts[0] as Context, () =>
      store(batch.map(({ event }, index) => ({ event, trace: traceCarrierOf(contexts[index] as Context) }))),
    );
  } catch (error) {
    for (const span of spans) recordFailure(span, error);
    throw error;
  } finally {
    for (const span of spans) span.end();
  }
}

/** A batch's deliveries, and what storing and attempting them needs. */
type Planned = {
  /** The events that have deliveries, with the body receivers get. */
  events: Array<{ event: EventEnvelope; body: string }>;
  bodies: Map<string, string>;
  deliveries: NewDelivery[];
  endpoints: Map<string, SubscribedEndpoint>;
  storedAt: Date;
};

/**
 * The events' deliveries, and the events that have any; an event nobody subscribes to is not
 * kept. Planned from the environments' endpoint sets (`known`, one per environment of the batch);
 * the caller stores the events and their deliveries together in one statement.
 */
function planDeliveries(known: Map<string, EndpointSet>, batch: Traced[]): Planned {
  const endpoints = [...known.values()].flatMap((set) => set.endpoints);
  const planned: Planned = {
    events: [],
    bodies: new Map(),
    deliveries: [],
    endpoints: new Map(endpoints.map((endpoint) => [endpoint.id, endpoint])),
    storedAt: new Date(),
  };
  for (const { event, trace: traceContext } of batch) {
    const emittedAt = Date.parse(event.timestamp);
    let heard = false;
    for (const endpoint of endpoints) {
      if (endpoint.environment_id !== event.environment_id) continue;
      // An endpoint hears the events emitted since it exists, however late they are consumed.
      if (endpoint.created_at.getTime() > emittedAt) continue;
      if (!endpoint.event_types.includes("*") && !endpoint.event_types.includes(event.type)) continue;
      heard = true;
      planned.deliveries.push({
        id: newId(),
        environmentId: event.environment_id,
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        traceContext,
      });
    }
    if (heard && !planned.bodies.has(event.id)) {
      const body = eventBody(event);
      planned.bodies.set(event.id, body);
      planned.events.push({ event, body });
    }
  }
  return planned;
}
