import { newId, type PoolClient, type Queryable } from "@evalp/kit";
import { afterAll, beforeAll, test } from "vitest";
import {
  storeEndpointsOf,
  storeOtherTenantsEndpoints,
  testBatch,
  useTestDatabase,
} from "../database.test-support.js";
import { insertEventDeliveries } from "./deliveries.js";
import { readEndpointSets } from "./endpoint-sets.js";

/**
 * The events consumer's store of a batch (4 events, each to the environment's 3 endpoints, beside
 * 2,000 endpoints of other environments), prepared as the consumer sends it, against the same
 * statement sent unnamed, which Postgres parses and plans at every batch (webhooks migration
 * 011, docs/operations.md#prepared-statements). Each side has a connection of its own, with
 * `synchronous_commit` off so that the disk's flush, the same for both, does not hide the
 * statement's cost. Run: npx vitest bench --run --project "unit (bench)" services/webhooks
 * (from the repository root).
 */

const db = useTestDatabase();
const environment = newId();
const endpoints: string[] = [];
let planned = new Map<string, string | null>();
let prepared: PoolClient | undefined;
let unnamed: PoolClient | undefined;

beforeAll(async () => {
  endpoints.push(...(await storeEndpointsOf(db.pool, environment, 3)));
  await storeOtherTenantsEndpoints(db.pool, 2000);
  planned = new Map([
    [environment, (await readEndpointSets(db.pool, [environment])).get(environment)?.fingerprint ?? null],
  ]);
  prepared = await db.pool.connect();
  unnamed = await db.pool.connect();
  for (const client of [prepared, unnamed]) await client.query("SET synchronous_commit = off");
});

afterAll(() => {
  prepared?.release();
  unnamed?.release();
});

/** A connection that sends every statement unnamed: parsed and planned at each run. */
function withoutNames(client: PoolClient): Queryable {
  return {
    query: (config: { text: string; values?: unknown[] }) =>
      client.query({ text: config.text, values: config.values }),
  } as unknown as Queryable;
}

async function storeBatch(on: Queryable): Promise<void> {
  const { events, deliveries } = testBatch(environment, endpoints, 4);
  const stored = await insertEventDeliveries(on, events, deliveries, { planned });
  if (stored.stale || stored.unleasedSince.size !== endpoints.length)
    throw new Error("the batch was not stored");
}

test("the consumer's store of a batch", async ({ bench }) => {
  if (!prepared || !unnamed) throw new Error("the connections are made before the bench");
  const on = { prepared, unnamed: withoutNames(unnamed) };
  await bench.compare(
    bench("sent unnamed (parsed and planned each time), the baseline", () => storeBatch(on.unnamed)),
    bench("prepared, as the consumer sends it", () => storeBatch(on.prepared)),
  );
});
