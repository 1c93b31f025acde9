import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  type EventEnvelope,
  idList,
  isUuid,
  notFound,
  type Pool,
  pageClause,
  preparedStatement,
  type Queryable,
  runBeforeCommit,
  type TraceCarrier,
  WEBHOOKS_ROOT,
  writeOutboxMessage,
} from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import {
  type Attempt,
  AttemptSchema,
  type Delivery,
  DeliverySchema,
} from "@evalp/proto/webhooks/v1/delivery";
import type pg from "pg";

export type DeliveryStatus = "pending" | "failed" | "succeeded" | "dead_letter";
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["pending", "failed", "succeeded", "dead_letter"];

export type DeliveryRow = {
  id: string;
  environment_id: string;
  endpoint_id: string;
  event_id: string;
  event_type: string;
  status: DeliveryStatus;
  attempt_count: number;
  next_attempt_at: Date | null;
  last_error: string | null;
  response_status: number | null;
  delivered_at: Date | null;
  created_at: Date;
};

export const DELIVERY_COLUMNS = `id, environment_id, endpoint_id, event_id, event_type, status, attempt_count,
  next_attempt_at, last_error, response_status, delivered_at, created_at`;

type AttemptRow = {
  attempted_at: Date;
  response_status: number | null;
  error: string | null;
  duration_ms: number;
};

export function deliveryMessage(row: DeliveryRow, attempts: AttemptRow[] = []): Delivery {
  return create(DeliverySchema, {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    eventType: row.event_type,
    attemptCount: row.attempt_count,
    createdAt: timestampFromDate(row.created_at),
    deliveredAt: row.delivered_at ? timestampFromDate(row.delivered_at) : undefined,
    lastError: row.last_error ?? undefined,
    nextAttemptAt: row.next_attempt_at ? timestampFromDate(row.next_attempt_at) : undefined,
    responseStatus: row.response_status ?? undefined,
    status: row.status,
    attempts: attempts.map(attemptMessage),
  });
}

function attemptMessage(row: AttemptRow): Attempt {
  return create(AttemptSchema, {
    attemptedAt: timestampFromDate(row.attempted_at),
    responseStatus: row.response_status ?? undefined,
    error: row.error ?? undefined,
    durationMs: row.duration_ms,
  });
}

/** A delivery of the environment; 404 otherwise. */
export async function requireDelivery(db: Queryable, environmentId: string, deliveryId: string) {
  if (!isUuid(deliveryId)) throw notFound("webhook_delivery");
  const found = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND environment_id = $2`,
    [deliveryId, environmentId],
  );
  const row = found.rows[0];
  if (!row) throw notFound("webhook_delivery");
  return row;
}

export async function attemptsOf(db: Queryable, deliveryId: string): Promise<AttemptRow[]> {
  const found = await db.query<AttemptRow>(
    `SELECT attempted_at, response_status, error, duration_ms FROM webhook_delivery_attempts
     WHERE delivery_id = $1 ORDER BY attempted_at, id`,
    [deliveryId],
  );
  return found.rows;
}

/** The subject dead letters are published on (docs/webhooks.md), under the webhooks root. */
export const DEAD_LETTER_SUBJECT = `${WEBHOOKS_ROOT}.dead_letter`;

/**
 * Announces a delivery that turned `dead_letter` on `webhooks.dead_letter`, through this
 * service's outbox so that it is published exactly when the status change commits.
 */
export async function writeDeadLetter(db: Queryable, row: DeliveryRow): Promise<void> {
  await writeOutboxMessage(db, {
    type: "webhook.dead_letter",
    subject: DEAD_LETTER_SUBJECT,
    environmentId: row.environment_id,
    payload: {
      delivery_id: row.id,
      endpoint_id: row.endpoint_id,
      event_id: row.event_id,
      event_type: row.event_type,
      environment_id: row.environment_id,
      attempt_count: row.attempt_count,
      last_error: row.last_error,
      response_status: row.response_status,
      timestamp: new Date().toISOString(),
    },
  });
}

/**
 * Turns every waiting delivery (pending or failed) of an endpoint `dead_letter` with `reason`,
 * taking their locks in id order, and announces each. In-flight attempts lose their lease, so
 * they record their attempt but cannot set an outcome.
 */
export async function deadLetterWaiting(db: Queryable, endpointId: string, reason: string): Promise<number> {
  const updated = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries d
     SET status = 'dead_letter', last_error = $2, next_attempt_at = NULL, leased_until = NULL,
         claim_token = NULL, updated_at = clock_timestamp()
     FROM (SELECT id FROM webhook_deliveries WHERE endpoint_id = $1 AND status IN ('pending', 'failed')
           ORDER BY id FOR UPDATE) w
     WHERE d.id = w.id
     RETURNING ${DELIVERY_COLUMNS.replace(/(\w+)/g, "d.$1")}`,
    [endpointId, reason],
  );
  for (const row of updated.rows) await writeDeadLetter(db, row);
  return updated.rowCount ?? 0;
}

/** A delivery to insert: one per endpoint and event, due at once. */
export type NewDelivery = {
  id: string;
  environmentId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The consumer's span of the event, which each attempt continues. */
  traceContext: TraceCarrier | null;
  /** Stored leased to the storing worker (the lease given to `insertEventDeliveries`), rather than left to a claim. */
  leased?: boolean;
};

/** The subject an event is about (`data.subject_id`), which its erasure and export look events up by. */
export function subjectOf(event: EventEnvelope): string | null {
  const subjectId = event.data.subject_id;
  return typeof subjectId === "string" && isUuid(subjectId) ? subjectId : null;
}

/** What `insertEventDeliveries` stored: deliveries that existed already are in neither. */
export type StoredDeliveries = {
  /** The ids of the deliveries stored leased. */
  leased: Set<string>;
  /** When the first of those stored unleased (left to a claim) was created, per endpoint. */
  unleasedSince: Map<string, Date>;
  /** The endpoints of the deliveries stored whose failure streak was open (read by the same statement). */
  failing: Set<string>;
  /**
   * Nothing was stored: an environment's endpoints changed since the fingerprint planned with
   * (`planned` of the options), so the deliveries must be planned again.
   */
  stale: boolean;
};

/**
 * The conflict clause of every insert of events: an event already stored (a redelivered message)
 * is kept as it was, but locked (an update whose condition is false still locks the row it found),
 * so that retention, which deletes an event only once it holds its lock, cannot delete it while
 * the statement stores deliveries that refer to it (no foreign key guards them). Events are
 * inserted in id order, so two replicas storing the same redelivered events lock them in one order.
 */
export const KEEP_STORED_EVENT = "ON CONFLICT (id) DO UPDATE SET body = webhook_events.body WHERE false";

/**
 * Stores events (with the body receivers get) and their deliveries, due now, in one statement, so
 * a batch costs the consumer one round trip and one commit. An event or delivery that exists
 * already (a redelivered message) is left as it is (the event locked: `KEEP_STORED_EVENT`). The
 * deliveries marked `leased` are stored under `lease` (its token, for `ms` from now), so that no
 * claim is needed to attempt them. With `planned` (each environment's endpoint-set fingerprint
 * the deliveries were planned from), the statement stores nothing, and answers `stale`, unless
 * every one of them still holds. A prepared statement: what it reads of the endpoints table it
 * reads through functions whose kept plans go by index at any table size (migrations 011 and
 * 012), since a plan made once, while the table was small, read the whole table once it was
 * large (9,006 rows read for 3,000 endpoints).
 */
export async function insertEventDeliveries(
  db: Queryable,
  events: Array<{ event: EventEnvelope; body: string }>,
  deliveries: NewDelivery[],
  options: StoreOptions = {},
): Promise<StoredDeliveries> {
  return storedDeliveriesOf(await db.query(eventDeliveriesStatement(events, deliveries, options)));
}

/**
 * `insertEventDeliveries` on a connection of `pool`, answered as soon as the statement has run,
 * while Postgres commits it (kit's runBeforeCommit): `committed` resolves once it is durable, and
 * rejects if it could not commit, in which case nothing was stored.
 */
export async function insertEventDeliveriesBeforeCommit(
  pool: Pool,
  events: Array<{ event: EventEnvelope; body: string }>,
  deliveries: NewDelivery[],
  options: StoreOptions = {},
): Promise<{ stored: StoredDeliveries; committed: Promise<void> }> {
  const client = await pool.connect();
  const run = runBeforeCommit(client, eventDeliveriesStatement(events, deliveries, options));
  // The connection goes back once its commit is answered.
  run.committed.then(
    () => client.release(),
    () => client.release(),
  );
  return { stored: storedDeliveriesOf(await run.result), committed: run.committed };
}

/** What `insertEventDeliveries` takes besides the events and deliveries. */
type StoreOptions = { lease?: { token: string; ms: number }; planned?: Map<string, string | null> };

type StoredRow = {
  id: string | null;
  endpoint_id: string;
  leased: boolean;
  created_at: Date;
  failing: boolean;
};

/**
 * What `insertEventDeliveries` runs, prepared once per connection. The failing endpoints are read
 * once per batch, of the batch's distinct endpoints, in a CTE kept apart (MATERIALIZED): as a
 * subquery in the final FROM, Postgres pulled the call up into the select list and ran it once
 * per stored delivery, each time over the batch's full, repeated endpoint list; a backlog's batch
 * of 1,800 deliveries made 1,800 calls, each sorting 1,800 ids, over half of Postgres's time.
 */
const STORE_EVENT_DELIVERIES = preparedStatement(
  "webhooks_store_event_deliveries",
  `WITH fresh AS MATERIALIZED (SELECT webhook_endpoint_sets_hold($17::uuid[], $18::text[]) AS holds),
     stored_events AS (
       INSERT INTO webhook_events (id, environment_id, event_type, body, created_at, subject_id)
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::timestamptz[], $15::uuid[])
       WHERE (SELECT holds FROM fresh)
       ORDER BY 1
       ${KEEP_STORED_EVENT}
     ),
     stored AS (
       INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, trace_context,
         next_attempt_at, leased_until, claim_token)
       SELECT d.id, d.environment_id, d.endpoint_id, d.event_id, d.event_type, d.trace_context, now(),
         CASE WHEN d.leased THEN clock_timestamp() + make_interval(secs => $13::double precision / 1000) END,
         CASE WHEN d.leased THEN $12::uuid END
       FROM unnest($6::uuid[], $7::uuid[], $8::uuid[], $9::uuid[], $10::text[], $11::jsonb[], $14::bool[])
         AS d (id, environment_id, endpoint_id, event_id, event_type, trace_context, leased)
       WHERE (SELECT holds FROM fresh)
       ON CONFLICT ON CONSTRAINT webhook_deliveries_once DO NOTHING
       RETURNING id, endpoint_id, claim_token IS NOT NULL AS leased, created_at
     ),
     failing AS MATERIALIZED (SELECT webhook_failing_endpoints($16::uuid[]) AS ids)
     SELECT s.id, s.endpoint_id, s.leased, s.created_at, s.endpoint_id = ANY (f.ids) AS failing
     FROM stored s, failing f
     UNION ALL SELECT NULL, NULL, NULL, NULL, NULL FROM fresh WHERE NOT holds`,
);

/** The statement of `insertEventDeliveries`, with its values. */
function eventDeliveriesStatement(
  events: Array<{ event: EventEnvelope; body: string }>,
  deliveries: NewDelivery[],
  options: StoreOptions,
): pg.QueryConfig {
  const { lease, planned = new Map<string, string | null>() } = options;
  return STORE_EVENT_DELIVERIES([
    // Ids as array literals (`idList`); text and JSON as arrays, which node-postgres escapes.
    idList(events.map(({ event }) => event.id)),
    idList(events.map(({ event }) => event.environment_id)),
    events.map(({ event }) => event.type),
    events.map(({ body }) => body),
    events.map(({ event }) => event.timestamp),
    idList(deliveries.map((d) => d.id)),
    idList(deliveries.map((d) => d.environmentId)),
    idList(deliveries.map((d) => d.endpointId)),
    idList(deliveries.map((d) => d.eventId)),
    deliveries.map((d) => d.eventType),
    deliveries.map((d) => (d.traceContext ? JSON.stringify(d.traceContext) : null)),
    lease?.token ?? null,
    lease?.ms ?? 0,
    deliveries.map((d) => lease !== undefined && d.leased === true),
    events.map(({ event }) => subjectOf(event)),
    idList([...new Set(deliveries.map((d) => d.endpointId))]),
    // The fingerprints last: the consumer's tests find a checked store by them.
    idList([...planned.keys()]),
    [...planned.values()],
  ]);
}

/** What the statement of `insertEventDeliveries` answered. */
function storedDeliveriesOf(stored: pg.QueryResult): StoredDeliveries {
  const result: StoredDeliveries = {
    leased: new Set(),
    unleasedSince: new Map(),
    failing: new Set(),
    stale: false,
  };
  for (const row of stored.rows as StoredRow[]) {
    if (row.id === null) {
      result.stale = true;
      continue;
    }
    if (row.failing) result.failing.add(row.endpoint_id);
    if (row.leased) {
      result.leased.add(row.id);
      continue;
    }
    const since = result.unleasedSince.get(row.endpoint_id);
    if (!since || row.created_at < since) result.unleasedSince.set(row.endpoint_id, row.created_at);
  }
  return result;
}

/**
 * Of the endpoints (each with a time), those with a first attempt still to make on a delivery
 * created since that time: deliveries left to claims, which later ones must not overtake.
 */
export async function endpointsWaiting(db: Queryable, since: Map<string, Date>): Promise<Set<string>> {
  const found = await db.query<{ endpoint_id: string }>(
    `SELECT e.endpoint_id FROM unnest($1::uuid[], $2::timestamptz[]) AS e (endpoint_id, since)
     WHERE EXISTS (SELECT 1 FROM webhook_deliveries d
                   WHERE d.endpoint_id = e.endpoint_id AND d.created_at >= e.since
                     AND d.status = 'pending' AND d.attempt_count = 0)`,
    [[...since.keys()], [...since.values()]],
  );
  return new Set(found.rows.map((row) => row.endpoint_id));
}

/** A page of the environment's deliveries, newest first, of one status and endpoint when given. */
export async function listDeliveryRows(
  db: Queryable,
  environmentId: string,
  filter: { status: string | null; endpointId: string | null; eventType: string | null },
  page: PageRequest | undefined,
): Promise<DeliveryRow[]> {
  const clause = pageClause(page, 5);
  const found = await db.query<DeliveryRow>(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
     WHERE environment_id = $1 AND ($2::text IS NULL OR status = $2) AND ($3::uuid IS NULL OR endpoint_id = $3)
       AND ($4::text IS NULL OR event_type = $4) AND ${clause.where} ${clause.tail}`,
    [environmentId, filter.status, filter.endpointId, filter.eventType, ...clause.params],
  );
  return found.rows;
}

/** The endpoint's `failed` and `dead_letter` deliveries created since `since`. */
export async function countRecoverable(db: Queryable, endpointId: string, since: Date): Promise<number> {
  const counted = await db.query<{ n: number }>(
    `SELECT count(*) AS n FROM webhook_deliveries
     WHERE endpoint_id = $1 AND status IN ('failed', 'dead_letter') AND created_at >= $2`,
    [endpointId, since],
  );
  return counted.rows[0]?.n ?? 0;
}

/**
 * Makes the endpoint's `failed` and `dead_letter` deliveries created since `since` pending
 * again, due at once on a fresh retry schedule (locks taken in id order); how many.
 */
export async function recoverDeliveries(db: Queryable, endpointId: string, since: Date): Promise<number> {
  const recovered = await db.query(
    `UPDATE webhook_deliveries d
     SET status = 'pending', next_attempt_at = now(), series_start = d.attempt_count, leased_until = NULL,
         claim_token = NULL, updated_at = clock_timestamp()
     FROM (SELECT id FROM webhook_deliveries
           WHERE endpoint_id = $1 AND status IN ('failed', 'dead_letter') AND created_at >= $2
           ORDER BY id FOR UPDATE) r
     WHERE d.id = r.id`,
    [endpointId, since],
  );
  return recovered.rowCount ?? 0;
}

/** Makes a delivery pending again, due at once on a fresh retry schedule; an attempt in flight loses its lease. */
export async function replayDeliveryRow(db: Queryable, deliveryId: string): Promise<DeliveryRow> {
  const replayed = await db.query<DeliveryRow>(
    `UPDATE webhook_deliveries
     SET status = 'pending', next_attempt_at = now(), series_start = attempt_count, leased_until = NULL,
         claim_token = NULL, updated_at = clock_timestamp()
     WHERE id = $1 RETURNING ${DELIVERY_COLUMNS}`,
    [deliveryId],
  );
  return replayed.rows[0] as DeliveryRow;
}

/** One delivery due at once (a test event's). */
export async function insertDelivery(db: Queryable, delivery: NewDelivery): Promise<DeliveryRow> {
  const inserted = await db.query<DeliveryRow>(
    `INSERT INTO webhook_deliveries (id, environment_id, endpoint_id, event_id, event_type, trace_context, next_attempt_at)
     VALUES ($1, $2, $3, $4, $5, $6, now()) RETURNING ${DELIVERY_COLUMNS}`,
    [
      delivery.id,
      delivery.environmentId,
      delivery.endpointId,
      delivery.eventId,
      delivery.eventType,
      delivery.traceContext,
    ],
  );
  return inserted.rows[0] as DeliveryRow;
}
