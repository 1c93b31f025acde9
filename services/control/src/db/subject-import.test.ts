import { createPool, newId, type Pool } from "@evalp/kit";
import { createTestDatabase, type TestDatabase } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../server.js";
import { READ_IMPORT_STATE, readImportState } from "./subject-import.js";

// A real Postgres with control's migrations: what an import reads must not grow with its
// environment, whatever plan Postgres keeps for the prepared statement.
let database: TestDatabase;
let pool: Pool;
const ref = { organizationId: newId(), appId: newId(), environmentId: newId() };
const SUBJECTS = 3_000;

/** The environment's subjects, `user-1` … `user-<count>`, `user-2` erased. */
async function storeSubjects(count: number): Promise<void> {
  await pool.query(
    `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
     SELECT gen_random_uuid(), $1, 'user-' || n, 'self_managed', '{}' FROM generate_series(1, $2) AS n`,
    [ref.environmentId, count],
  );
  // An erased subject: its external id is gone, and it is never known to an import.
  await pool.query(
    `UPDATE subjects SET external_id = NULL, profile = '{}', erased_at = now()
     WHERE environment_id = $1 AND external_id = 'user-2'`,
    [ref.environmentId],
  );
}

beforeAll(async () => {
  database = await createTestDatabase([migrations]);
  pool = createPool({ databaseUrl: database.url, schema: migrations.schema, max: 2 });
  await pool.query("INSERT INTO organizations (id, name) VALUES ($1, 'Org')", [ref.organizationId]);
  await pool.query("INSERT INTO apps (id, organization_id, slug, name) VALUES ($1, $2, 'app', 'App')", [
    ref.appId,
    ref.organizationId,
  ]);
  await pool.query("INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, 'live', 'Live')", [
    ref.environmentId,
    ref.appId,
  ]);
  await pool.query("INSERT INTO quotas (environment_id) VALUES ($1)", [ref.environmentId]);
  // No statistics change under the tests' feet: a plan is kept as it was made.
  await pool.query("ALTER TABLE subjects SET (autovacuum_enabled = false)");
});
afterAll(async () => {
  await pool?.end();
  await database?.drop();
});

describe("an import's state", () => {
  it("reads a few pages whatever the environment has grown to since its plan was made", async () => {
    const client = await pool.connect();
    try {
      // The plan Postgres settles on after a prepared statement's first executions, made here
      // while the environment has no subjects, as in a new environment's first imports.
      await client.query("SET plan_cache_mode = force_generic_plan");
      const statement = READ_IMPORT_STATE([ref.environmentId, ref.appId, ref.organizationId, ["user-7"]]);
      await client.query(statement);
      await storeSubjects(SUBJECTS);
      const explained = await client.query<{
        "QUERY PLAN": Array<{ Plan: { "Shared Hit Blocks": number } }>;
      }>(
        // EXECUTE takes no parameters: the test's own values, as literals.
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE "${statement.name}"(
           '${ref.environmentId}', '${ref.appId}', '${ref.organizationId}', ARRAY['user-7'])`,
      );
      const plan = explained.rows[0]?.["QUERY PLAN"][0]?.Plan;
      // An index look-up per table: about a dozen pages. Reading the environment's subjects was 40+.
      expect(plan?.["Shared Hit Blocks"]).toBeLessThan(30);
    } finally {
      client.release();
    }
  });

  it("names the batch's known subjects, erased ones left out, and the environment's count", async () => {
    const state = await readImportState(pool, ref, ["user-1", "user-2", "user-3", "new-1"]);
    expect([...state.known.keys()].sort()).toEqual(["user-1", "user-3"]);
    expect(state.subjects).toBe(SUBJECTS - 1);
    expect(state.limit).toBe(10_000);
  });
});
