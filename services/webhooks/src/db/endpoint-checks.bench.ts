import { newId, type PoolClient, preparedStatement } from "@evalp/kit";
import { afterAll, beforeAll, test } from "vitest";
import { storeEndpointsOf, storeOtherTenantsEndpoints, useTestDatabase } from "../database.test-support.js";
import { type EndpointSet, endpointSetsHold, readEndpointSets } from "./endpoint-sets.js";

/**
 * The events consumer's confirmation that a kept endpoint set still holds (an environment of 3
 * endpoints, beside 2,000 of other environments), through migration 012's PL/pgSQL functions,
 * whose plans are kept, against the same check through migration 011's SQL functions, made here
 * under names of their own, which Postgres parses and plans at every call. Each side has a
 * connection of its own. Run: npx vitest bench --run --project "unit (bench)" services/webhooks
 * (from the repository root).
 */

const db = useTestDatabase();
const environment = newId();
let kept = new Map<string, EndpointSet>();
let checks: PoolClient | undefined;
let planned: PoolClient | undefined;

/** Migration 011's definitions of the check, under the bench's names. */
const SQL_FUNCTIONS = `
CREATE FUNCTION bench_set_fingerprint(environment uuid) RETURNS text
LANGUAGE sql STABLE SET plan_cache_mode = force_custom_plan AS $$
  SELECT md5(string_agg(e.id::text || ':' || COALESCE(e.version, 0), ',' ORDER BY e.id))
  FROM webhook_endpoints e WHERE e.environment_id = environment AND e.deleted_at IS NULL
$$;
CREATE FUNCTION bench_sets_hold(environments uuid[], fingerprints text[]) RETURNS boolean
LANGUAGE sql STABLE AS $$
  SELECT COALESCE(bool_and(
    bench_set_fingerprint(planned.environment_id) IS NOT DISTINCT FROM planned.fingerprint), true)
  FROM unnest(environments, fingerprints) AS planned (environment_id, fingerprint)
$$;`;
const SQL_HOLD = preparedStatement(
  "webhooks_bench_sets_hold_sql",
  "SELECT bench_sets_hold($1::uuid[], $2::text[]) AS holds",
);

beforeAll(async () => {
  await storeEndpointsOf(db.pool, environment, 3);
  await storeOtherTenantsEndpoints(db.pool, 2000);
  await db.pool.query(SQL_FUNCTIONS);
  kept = await readEndpointSets(db.pool, [environment]);
  checks = await db.pool.connect();
  planned = await db.pool.connect();
});

afterAll(() => {
  checks?.release();
  planned?.release();
});

test("the confirmation of a kept endpoint set", async ({ bench }) => {
  const [onChecks, onPlanned] = [checks, planned];
  if (!onChecks || !onPlanned) throw new Error("the connections are made before the bench");
  const fingerprints = [...kept.values()].map((set) => set.fingerprint);
  await bench.compare(
    bench("through SQL functions (parsed and planned at each call), the baseline", async () => {
      const found = await onChecks.query(SQL_HOLD([[...kept.keys()], fingerprints]));
      if (found.rows[0]?.holds !== true) throw new Error("the set no longer holds");
    }),
    bench("through PL/pgSQL functions (plans kept), as the consumer confirms it", async () => {
      if (!(await endpointSetsHold(onPlanned, kept))) throw new Error("the set no longer holds");
    }),
  );
});
