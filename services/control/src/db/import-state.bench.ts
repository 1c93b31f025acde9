import { createPool, newId, type Pool, type PoolClient, preparedStatement } from "@evalp/kit";
import { createTestDatabase, type TestDatabase } from "@evalp/testing";
import { afterAll, beforeAll, test } from "vitest";
import { migrations } from "../server.js";
import { storeEnvironment, storeSubjects } from "./database.test-support.js";
import { READ_IMPORT_STATE } from "./subject-import.js";

/**
 * An import's read of its state (scope, limit, count, known subjects) in an environment of 3,000
 * subjects, for a batch of one external id (the commonest import): through migration 011's
 * function, whose one generic plan is kept, against the same query as the prepared statement it
 * was before, for which Postgres makes a custom plan at each call once the environment has grown
 * (docs/operations.md#prepared-statements). Each side has a connection of its own. Run:
 * npx vitest bench --run --project "unit (bench)" services/control (from the repository root).
 */

/** The read as it was sent before migration 011: the same query, prepared under a name of its own. */
const INLINE_READ = preparedStatement(
  "control.import_state_inline_bench",
  `SELECT q.active_subjects AS limit,
          (SELECT COALESCE(sum(subjects), 0)::bigint FROM subject_count_shards WHERE environment_id = $1) AS subjects,
          COALESCE((SELECT json_object_agg(external_id, id) FILTER (WHERE erased_at IS NULL) FROM subjects
                    WHERE environment_id = $1 AND external_id = ANY($4)), '{}') AS known
   FROM environments e JOIN apps a ON a.id = e.app_id
   JOIN quotas q ON q.environment_id = e.id
   WHERE e.id = $1 AND a.id = $2 AND a.organization_id = $3`,
);

const ref = { organizationId: newId(), appId: newId(), environmentId: newId() };
let database: TestDatabase | undefined;
let pool: Pool | undefined;
let kept: PoolClient | undefined;
let inline: PoolClient | undefined;
let n = 0;

beforeAll(async () => {
  database = await createTestDatabase([migrations]);
  pool = createPool({ databaseUrl: database.url, schema: migrations.schema, max: 2 });
  await storeEnvironment(pool, ref);
  await storeSubjects(pool, ref.environmentId, 3000);
  await pool.query("ANALYZE");
  kept = await pool.connect();
  inline = await pool.connect();
});

afterAll(async () => {
  kept?.release();
  inline?.release();
  await pool?.end();
  await database?.drop();
});

/** The read's values for a batch of one id, a known subject's or a new one's in turn. */
function values(): unknown[] {
  n += 1;
  const externalId = n % 2 === 0 ? `user-${(n % 3000) + 1}` : `new-${n}`;
  return [ref.environmentId, ref.appId, ref.organizationId, [externalId]];
}

test("an import's read of its state", async ({ bench }) => {
  const [onKept, onInline] = [kept, inline];
  if (!onKept || !onInline) throw new Error("the connections are made before the bench");
  await bench.compare(
    bench("the query prepared as is (a custom plan at each call), the baseline", async () => {
      await onInline.query(INLINE_READ(values()));
    }),
    bench("through import_state (one generic plan kept)", async () => {
      await onKept.query(READ_IMPORT_STATE(values()));
    }),
  );
});
