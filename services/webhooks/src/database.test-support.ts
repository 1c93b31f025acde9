import { createPool, type EventEnvelope, newId, type Pool, type Queryable } from "@evalp/kit";
import { createTestDatabase, type TestDatabase } from "@evalp/testing";
import { afterAll, beforeAll } from "vitest";
import { insertEventDeliveries, type NewDelivery } from "./db/deliveries.js";
import type { ClaimedDelivery } from "./db/delivery-attempts.js";
import { insertEndpoint } from "./db/endpoints.js";
import { eventBody } from "./event-body.js";
import { createSecretSealer, type SecretEnvelope } from "./sealed-secrets.js";
import { generateSecret } from "./secrets.js";
import { migrations } from "./server.js";

/** The environment the plane's database tests write in, and the key their endpoints' secrets are sealed with. */
export const TEST_ENVIRONMENT = "01936f6e-7a2b-7c3d-8e4f-5a6b7c8d9e0f";
export const testSealer = createSecretSealer({ WEBHOOK_SECRETS_KEYS: `test:${"k".repeat(40)}` });

/**
 * A database of this plane's migrations for the calling test file, made before its tests and
 * dropped after them, with a pool of `max` connections on it (read `pool` inside the tests).
 */
export function useTestDatabase(max = 4): { readonly pool: Pool } {
  let database: TestDatabase | undefined;
  let pool: Pool | undefined;
  beforeAll(async () => {
    database = await createTestDatabase([migrations]);
    pool = createPool({ databaseUrl: database.url, schema: migrations.schema, max });
  });
  afterAll(async () => {
    await pool?.end();
    await database?.drop();
  });
  return {
    get pool(): Pool {
      if (!pool) throw new Error("the test database is made before the tests, not while the file loads");
      return pool;
    },
  };
}

/** A `subject.imported` event of `environmentId`, with the body receivers get, as the consumer stores it. */
export function testEvent(
  environmentId: string = TEST_ENVIRONMENT,
  data: Record<string, unknown> = {},
): { event: EventEnvelope; body: string } {
  const event: EventEnvelope = {
    id: newId(),
    type: "subject.imported",
    timestamp: new Date().toISOString(),
    environment_id: environmentId,
    data,
  };
  return { event, body: eventBody(event) };
}

/** `count` events of `environmentId` and a delivery of each to every one of `endpoints`, as the consumer stores them. */
export function testBatch(
  environmentId: string,
  endpoints: readonly string[],
  count: number,
): { events: Array<{ event: EventEnvelope; body: string }>; deliveries: NewDelivery[] } {
  const events = Array.from({ length: count }, () => testEvent(environmentId));
  const deliveries = events.flatMap(({ event }) =>
    endpoints.map((endpointId) => ({
      id: newId(),
      environmentId,
      endpointId,
      eventId: event.id,
      eventType: event.type,
      traceContext: null,
    })),
  );
  return { events, deliveries };
}

/**
 * Stores an endpoint of `environmentId` hearing every event, with a secret sealed under the test
 * key: its id, url and the sealed secret as a delivery carries it.
 */
export async function storeEndpointIn(
  pool: Queryable,
  environmentId: string,
  endpoint: { url?: string; enabled?: boolean } = {},
): Promise<{ id: string; url: string; secret: SecretEnvelope }> {
  const id = newId();
  const sealed = testSealer.seal(id, generateSecret());
  const row = await insertEndpoint(pool, {
    id,
    environmentId,
    url: endpoint.url ?? "https://receiver.example/hook",
    eventTypes: ["*"],
    secret: sealed,
    enabled: endpoint.enabled ?? true,
  });
  return { id: row.id, url: row.url, secret: `${sealed.kid}:${sealed.sealed}` as SecretEnvelope };
}

/** An endpoint of the test environment at `url` (`storeEndpointIn`). */
export function storeTestEndpoint(
  pool: Pool,
  url: string,
): Promise<{ id: string; url: string; secret: SecretEnvelope }> {
  return storeEndpointIn(pool, TEST_ENVIRONMENT, { url });
}

/** A first attempt's delivery of `eventId` to `target` as the dispatcher is handed it, leased under `token`. */
export function firstAttempt(
  target: { id: string; url: string; secret: SecretEnvelope },
  delivery: { eventId: string; body: string; token: string },
): ClaimedDelivery {
  return {
    id: newId(),
    endpoint_id: target.id,
    event_id: delivery.eventId,
    attempt_count: 0,
    series_start: 0,
    next_attempt_at: new Date(),
    claim_token: delivery.token,
    url: target.url,
    secret: target.secret,
    previous_secret: null,
    endpoint_stopped: false,
    endpoint_deleted: false,
    endpoint_failing: false,
    body: delivery.body,
    trace_context: null,
  };
}

/**
 * `count` events of the test environment, each delivered to every one of `targets`, stored leased
 * under `lease` as the events consumer stores them (on `db`: a pool, or a transaction's client);
 * resolves with what it hands the dispatcher.
 */
export async function storeLeasedDeliveries(
  db: Queryable,
  targets: ReadonlyArray<{ id: string; url: string; secret: SecretEnvelope }>,
  count: number,
  lease: { token: string; ms: number },
): Promise<ClaimedDelivery[]> {
  const events: Array<{ event: EventEnvelope; body: string }> = [];
  const handed: ClaimedDelivery[] = [];
  for (let n = 0; n < count; n++) {
    const { event, body } = testEvent(TEST_ENVIRONMENT, { n });
    events.push({ event, body });
    for (const target of targets) {
      handed.push(firstAttempt(target, { eventId: event.id, body, token: lease.token }));
    }
  }
  const stored = await insertEventDeliveries(
    db,
    events,
    handed.map((d) => ({
      id: d.id,
      environmentId: TEST_ENVIRONMENT,
      endpointId: d.endpoint_id,
      eventId: d.event_id,
      eventType: "subject.imported",
      traceContext: null,
      leased: true,
    })),
    { lease },
  );
  if (stored.leased.size !== handed.length) {
    throw new Error(`stored ${stored.leased.size} of ${handed.length} deliveries leased`);
  }
  return handed;
}

/** Stores `count` enabled endpoints of `environmentId` hearing every event (`storeEndpointIn`); their ids. */
export async function storeEndpointsOf(
  pool: Queryable,
  environmentId: string,
  count: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push((await storeEndpointIn(pool, environmentId)).id);
  return ids;
}

/** Stores `count` endpoints, each of an environment of its own: a table grown by other tenants. */
export async function storeOtherTenantsEndpoints(pool: Queryable, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO webhook_endpoints (id, environment_id, url, event_types, secret_sealed, secret_key_id)
     SELECT gen_random_uuid(), gen_random_uuid(), 'https://receiver.example/hook', '{*}', 'sealed', 'test'
     FROM generate_series(1, $1::int)`,
    [count],
  );
}
