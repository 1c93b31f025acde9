import { newId, type Queryable } from "@evalp/kit";
import { describe, expect, it } from "vitest";
import {
  storeEndpointIn,
  storeOtherTenantsEndpoints,
  testBatch,
  testEvent,
  testSealer,
  useTestDatabase,
} from "../database.test-support.js";
import { generateSecret } from "../secrets.js";
import { insertEventDeliveries } from "./deliveries.js";
import { endpointSetsHold, previousSecretAt, readEndpointSets } from "./endpoint-sets.js";
import {
  clearFailingSince,
  markDeleted,
  markDisabled,
  markEnabled,
  rotateEndpointSecret,
  setFailingSince,
  updateEndpointTarget,
} from "./endpoints.js";

// The events consumer plans deliveries from endpoint sets it kept in memory, and its store checks
// that they still hold (migration 010): a write of any kind must change its environment's
// fingerprint, and a store planned from a fingerprint that changed must store nothing.
const db = useTestDatabase();

async function endpointIn(environmentId: string, enabled = true): Promise<string> {
  return (await storeEndpointIn(db.pool, environmentId, { enabled })).id;
}

async function fingerprintOf(environmentId: string): Promise<string | null> {
  return (await readEndpointSets(db.pool, [environmentId])).get(environmentId)?.fingerprint ?? null;
}

/**
 * Stores one event of `environment` with a delivery to `endpoint`, planned from the fingerprints
 * `planned`, on `on` (the pool when not given).
 */
async function storeOne(
  environment: string,
  endpoint: string,
  planned: Map<string, string | null>,
  on: Queryable = db.pool,
) {
  const stored = testEvent(environment);
  const delivery = {
    id: newId(),
    environmentId: environment,
    endpointId: endpoint,
    eventId: stored.event.id,
    eventType: stored.event.type,
    traceContext: null,
  };
  const result = await insertEventDeliveries(on, [stored], [delivery], { planned });
  return { result, eventId: stored.event.id };
}

describe("endpoint sets", () => {
  it("reads the enabled endpoints of each environment, oldest first, and an empty set where there are none", async () => {
    const environment = newId();
    const empty = newId();
    const older = await endpointIn(environment);
    await endpointIn(environment, false);
    const newer = await endpointIn(environment);
    const sets = await readEndpointSets(db.pool, [environment, empty]);
    expect(sets.get(environment)?.endpoints.map((endpoint) => endpoint.id)).toEqual([older, newer]);
    expect(sets.get(environment)?.fingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(sets.get(empty)).toEqual({ fingerprint: null, endpoints: [] });
  });

  it("changes an environment's fingerprint with every write of one of its endpoints but its failure streak, and no other's", async () => {
    const environment = newId();
    const other = newId();
    const endpoint = await endpointIn(environment);
    const otherEndpoint = await endpointIn(other);
    const writes: Array<[string, () => Promise<unknown>]> = [
      ["created", () => endpointIn(environment)],
      [
        "retargeted",
        () =>
          updateEndpointTarget(db.pool, endpoint, {
            url: "https://receiver.example/other",
            setEventTypes: false,
            eventTypes: [],
          }),
      ],
      [
        "rotated",
        () => rotateEndpointSecret(db.pool, endpoint, testSealer.seal(endpoint, generateSecret()), 60_000),
      ],
      ["disabled", () => markDisabled(db.pool, endpoint, "requested")],
      ["enabled", () => markEnabled(db.pool, endpoint)],
      ["created disabled", () => endpointIn(environment, false)],
      ["deleted", () => markDeleted(db.pool, endpoint)],
    ];
    const seen = new Set<string | null>([await fingerprintOf(environment)]);
    const otherFingerprint = await fingerprintOf(other);
    for (const [what, write] of writes) {
      await write();
      const now = await fingerprintOf(environment);
      expect(seen.has(now), `fingerprint after "${what}" was seen before`).toBe(false);
      seen.add(now);
    }
    await db.pool.query("UPDATE webhook_endpoints SET url = url || '/other' WHERE id = $1", [otherEndpoint]);
    expect(await fingerprintOf(other)).not.toBe(otherFingerprint);
    expect(seen.has(await fingerprintOf(environment))).toBe(true);
  });

  it("keeps the fingerprint through a failure streak, and the store answers the streak as it is", async () => {
    const environment = newId();
    const endpoint = await endpointIn(environment);
    const planned = new Map([[environment, await fingerprintOf(environment)]]);
    await setFailingSince(db.pool, endpoint, new Date());
    expect(await fingerprintOf(environment)).toBe(planned.get(environment));
    const whileFailing = await storeOne(environment, endpoint, planned);
    expect(whileFailing.result).toMatchObject({ stale: false, failing: new Set([endpoint]) });
    await clearFailingSince(db.pool, endpoint);
    expect(await fingerprintOf(environment)).toBe(planned.get(environment));
    expect((await storeOne(environment, endpoint, planned)).result).toMatchObject({
      stale: false,
      failing: new Set(),
    });
  });

  it("stores a batch planned from fingerprints that hold, and nothing from one that changed", async () => {
    const environment = newId();
    const quiet = newId();
    const endpoint = await endpointIn(environment);
    const planned = new Map([
      [environment, await fingerprintOf(environment)],
      [quiet, await fingerprintOf(quiet)],
    ]);
    const kept = await storeOne(environment, endpoint, planned);
    expect(kept.result.stale).toBe(false);
    expect(kept.result.unleasedSince.has(endpoint)).toBe(true);

    // An endpoint created in an environment of the batch that had none.
    await endpointIn(quiet);
    const refused = await storeOne(environment, endpoint, planned);
    expect(refused.result).toEqual({
      leased: new Set(),
      unleasedSince: new Map(),
      failing: new Set(),
      stale: true,
    });
    const written = await db.pool.query<{ events: number; deliveries: number }>(
      `SELECT (SELECT count(*)::int FROM webhook_events WHERE id = $1) AS events,
              (SELECT count(*)::int FROM webhook_deliveries WHERE event_id = $1) AS deliveries`,
      [refused.eventId],
    );
    expect(written.rows[0]).toEqual({ events: 0, deliveries: 0 });
  });

  // The store is a prepared statement: after five runs on a connection, Postgres may keep one
  // generic plan for it, made from the table's size then. What it reads of the endpoints (the
  // sets' fingerprints, the failure streaks) must still go by index once the table has grown,
  // with no ANALYZE in between (a server whose autovacuum has not run yet). The connection is
  // made to keep the generic plan at once, as Postgres may choose to.
  it("reads only the batch's endpoints when it stores or confirms a set, on a connection that planned both while the table was small", async () => {
    const environment = newId();
    const endpoint = await endpointIn(environment);
    await setFailingSince(db.pool, endpoint, new Date());
    const planned = new Map([[environment, await fingerprintOf(environment)]]);
    const kept = new Map([[environment, { fingerprint: planned.get(environment) ?? null, endpoints: [] }]]);
    const client = await db.pool.connect();
    try {
      // The statements' plans, and those of the functions they read the endpoints through
      // (migrations 011 and 012), made now and kept.
      await client.query("SET plan_cache_mode = force_generic_plan");
      for (let run = 0; run < 3; run += 1) {
        await storeOne(environment, endpoint, planned, client);
        expect(await endpointSetsHold(client, kept)).toBe(true);
      }
      await storeOtherTenantsEndpoints(db.pool, 3000);
      await client.query("BEGIN");
      const read = async () =>
        (
          await client.query<{ seq: number; fetched: number }>(
            `SELECT COALESCE(seq_tup_read, 0)::int AS seq, COALESCE(idx_tup_fetch, 0)::int AS fetched
             FROM pg_stat_xact_user_tables WHERE relname = 'webhook_endpoints'`,
          )
        ).rows[0] ?? { seq: 0, fetched: 0 };
      const before = await read();
      const { result } = await storeOne(environment, endpoint, planned, client);
      const stored = await read();
      const holds = await endpointSetsHold(client, kept);
      const confirmed = await read();
      await client.query("COMMIT");
      expect(result).toMatchObject({ stale: false, failing: new Set([endpoint]) });
      expect(holds).toBe(true);
      expect(stored.seq - before.seq, "endpoint rows read by sequential scan to store").toBe(0);
      expect(stored.fetched - before.fetched).toBeGreaterThan(0);
      expect(confirmed.seq - stored.seq, "endpoint rows read by sequential scan to confirm").toBe(0);
      expect(confirmed.fetched - stored.fetched).toBeGreaterThan(0);
    } finally {
      await client.query("RESET plan_cache_mode");
      client.release();
    }
  });

  it("reads a batch's failing endpoints once, whatever the number of deliveries it stores", async () => {
    const environment = newId();
    const endpoints = [
      await endpointIn(environment),
      await endpointIn(environment),
      await endpointIn(environment),
    ];
    const failing = endpoints[1] as string;
    await setFailingSince(db.pool, failing, new Date());
    const planned = new Map([[environment, await fingerprintOf(environment)]]);
    const { events, deliveries } = testBatch(environment, endpoints, 8);
    const client = await db.pool.connect();
    try {
      await client.query("BEGIN");
      // Counted for this transaction only (pg_stat_xact_user_functions); needs a superuser, as the tests run.
      await client.query("SET LOCAL track_functions = 'pl'");
      const result = await insertEventDeliveries(client, events, deliveries, { planned });
      const calls = await client.query<{ calls: number }>(
        "SELECT calls::int FROM pg_stat_xact_user_functions WHERE funcname = 'webhook_failing_endpoints'",
      );
      await client.query("COMMIT");
      expect(result).toMatchObject({ stale: false, failing: new Set([failing]) });
      expect(result.unleasedSince.size).toBe(endpoints.length);
      expect(calls.rows.map((row) => row.calls)).toEqual([1]);
    } finally {
      client.release();
    }
  });

  it("stops signing with a rotated secret of a kept set once it expired, without a read", async () => {
    const environment = newId();
    const endpoint = await endpointIn(environment);
    await rotateEndpointSecret(db.pool, endpoint, testSealer.seal(endpoint, generateSecret()), 60_000);
    const [kept] = (await readEndpointSets(db.pool, [environment])).get(environment)?.endpoints ?? [];
    if (!kept?.previous_secret_expires_at) throw new Error("the rotation kept no previous secret");
    const expiresAt = kept.previous_secret_expires_at.getTime();
    expect(previousSecretAt(kept, Date.now())).toBe(kept.previous_secret);
    expect(kept.previous_secret).toMatch(/:/);
    expect(previousSecretAt(kept, expiresAt)).toBeNull();
  });
});
