import { preparedStatement, type Queryable } from "@evalp/kit";
import { type SecretEnvelope, secretEnvelopesSql } from "../sealed-secrets.js";

/*
 * An environment's endpoint set as the events consumer plans deliveries from it: the endpoints
 * that hear its events, and the fingerprint of all its endpoints not deleted (each row's id and
 * version; migration 010 gives every write of a row a version never used before, except a write
 * of its failure streak alone, which the store reads itself). Any endpoint created, changed
 * (enabled, disabled, rotated, retargeted) or deleted changes the fingerprint, so a set kept in
 * memory is known to still hold when the fingerprint it was read with is the one the environment
 * has now, which the statement storing the deliveries checks. The fingerprint is one SQL function
 * (`webhook_endpoint_set_fingerprint`, migration 011), read by both.
 */

/** An endpoint that hears events: what the consumer matches them against and an attempt needs. */
export type SubscribedEndpoint = {
  id: string;
  environment_id: string;
  event_types: string[];
  created_at: Date;
  url: string;
  secret: SecretEnvelope;
  /** While a rotation's previous secret has not expired. */
  previous_secret: SecretEnvelope | null;
  /** When it expires: a set kept in memory stops signing with it then. */
  previous_secret_expires_at: Date | null;
};

/** An environment's subscribed endpoints and the fingerprint they were read with. */
export type EndpointSet = { fingerprint: string | null; endpoints: SubscribedEndpoint[] };

type SetRow = Omit<SubscribedEndpoint, "id"> & { id: string | null; set_of: string; fingerprint: string };

/**
 * The endpoint sets of the environments, read in one statement (one snapshot): enabled endpoints
 * oldest first. An environment without endpoints has the set `{ fingerprint: null, endpoints: [] }`.
 */
export async function readEndpointSets(
  db: Queryable,
  environmentIds: string[],
): Promise<Map<string, EndpointSet>> {
  const found = await db.query<SetRow>(
    `WITH sets AS (
       SELECT environment_id, webhook_endpoint_set_fingerprint(environment_id) AS fingerprint
       FROM (SELECT DISTINCT unnest($1::uuid[])) AS given (environment_id)
     )
     SELECT s.environment_id AS set_of, s.fingerprint,
       e.id, e.environment_id, e.event_types, e.created_at, e.url, ${secretEnvelopesSql("e")},
       e.previous_secret_expires_at
     FROM sets s
     LEFT JOIN webhook_endpoints e
       ON e.environment_id = s.environment_id AND e.deleted_at IS NULL AND e.disabled_at IS NULL
     ORDER BY e.created_at, e.id`,
    [environmentIds],
  );
  const sets = new Map<string, EndpointSet>(
    environmentIds.map((environmentId) => [environmentId, { fingerprint: null, endpoints: [] }]),
  );
  for (const { set_of, fingerprint, ...endpoint } of found.rows) {
    const set = sets.get(set_of) ?? { fingerprint, endpoints: [] };
    set.fingerprint = fingerprint;
    if (endpoint.id !== null) set.endpoints.push(endpoint as SubscribedEndpoint);
    sets.set(set_of, set);
  }
  return sets;
}

/**
 * Prepared: the consumer runs it for every batch it planned no delivery for from sets kept in
 * memory (mostly events of environments without endpoints). Migration 011's function (012's
 * definition) reads each fingerprint by index at any table size.
 */
const SETS_HOLD = preparedStatement(
  "webhooks_endpoint_sets_hold",
  "SELECT webhook_endpoint_sets_hold($1::uuid[], $2::text[]) AS holds",
);

/**
 * Whether every one of the sets still has the fingerprint it was read with, in one snapshot: then
 * a read of them now would give the same sets, for the cost of their fingerprints alone.
 */
export async function endpointSetsHold(db: Queryable, sets: Map<string, EndpointSet>): Promise<boolean> {
  const found = await db.query<{ holds: boolean }>(
    SETS_HOLD([[...sets.keys()], [...sets.values()].map((set) => set.fingerprint)]),
  );
  return found.rows[0]?.holds === true;
}

/**
 * The previous secret an endpoint of a set still signs with at `now` (ms): a set kept in memory
 * outlives the expiry its read applied, so it is applied again when the set is used.
 */
export function previousSecretAt(endpoint: SubscribedEndpoint, now: number): SecretEnvelope | null {
  return (endpoint.previous_secret_expires_at?.getTime() ?? 0) > now ? endpoint.previous_secret : null;
}
