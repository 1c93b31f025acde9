import {
  createPool,
  eventEnvelope,
  eventMessage,
  type KeyInFlight,
  newId,
  outboxValues,
  type Pool,
  type PoolClient,
  runUnderKey,
  withTransaction,
} from "@evalp/kit";
import { createTestDatabase, type TestDatabase } from "@evalp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../server.js";
import {
  type ImportWrite,
  importWriteStatement,
  lockSubjectCount,
  NOT_ADMITTED,
  READ_IMPORT_STATE,
  readImportState,
  writeImport,
} from "./subject-import.js";

// A real Postgres with control's migrations: what an import reads must not grow with its
// environment, whatever plan Postgres keeps for the prepared statement.
let database: TestDatabase;
let pool: Pool;
/** The connection on which the first test made the write's plan, for the second to use. */
let writePlanned: PoolClient | undefined;
const ref = { organizationId: newId(), appId: newId(), environmentId: newId() };
const SUBJECTS = 3_000;

/**
 * The environment's subjects, `user-1` … `user-<count>`, `user-2` erased; and its count's rows, as
 * an environment's first import makes them (its locked attempt).
 */
async function storeSubjects(count: number): Promise<void> {
  await lockSubjectCount(pool, ref.environmentId);
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
  pool = createPool({ databaseUrl: database.url, schema: migrations.schema, max: 4 });
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

// The tests run in order: the first fills the environment (after its plan is made), and the
// others read and write in it.
describe("an import's state", () => {
  it("reads a few pages whatever the environment has grown to since its plan was made", async () => {
    const client = await pool.connect();
    try {
      // The plan Postgres settles on after a prepared statement's first executions, made here
      // while the environment has no subjects, as in a new environment's first imports.
      await client.query("SET plan_cache_mode = force_generic_plan");
      const statement = READ_IMPORT_STATE([ref.environmentId, ref.appId, ref.organizationId, ["user-7"]]);
      await client.query(statement);
      // The write's plan too (not admitted: the environment has no count yet; the plan is kept).
      await client.query("BEGIN");
      await expect(
        client.query(
          importWriteStatement(
            importOf(ref.environmentId, { subjects: 0, limit: 10_000, refused: 0 }, { updates: [newId()] }),
          ),
        ),
      ).rejects.toMatchObject({ code: NOT_ADMITTED });
      await client.query("ROLLBACK");
      writePlanned = client;
      await storeSubjects(SUBJECTS);
      const explained = await client.query<{
        "QUERY PLAN": Array<{ Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }>;
      }>(
        // EXECUTE takes no parameters: the test's own values, as literals.
        `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE "${statement.name}"(
           '${ref.environmentId}', '${ref.appId}', '${ref.organizationId}', ARRAY['user-7'])`,
      );
      const plan = explained.rows[0]?.["QUERY PLAN"][0]?.Plan;
      if (!plan) throw new Error("EXPLAIN gave no plan");
      // An index look-up per table: about a dozen pages. Reading the environment's subjects, as
      // the plan of the list's partial index did, was some 1,900.
      expect(plan["Shared Hit Blocks"] + plan["Shared Read Blocks"]).toBeLessThan(30);
    } finally {
      if (writePlanned !== client) client.release();
    }
  });

  it("updates known subjects by id, with the write's plan made before the environment grew", async () => {
    const client = writePlanned;
    if (!client) throw new Error("the first test made no plan");
    try {
      const known = await pool.query<{ id: string }>(
        "SELECT id FROM subjects WHERE environment_id = $1 AND external_id IN ('user-5', 'user-6')",
        [ref.environmentId],
      );
      const count = await countRow(ref.environmentId);
      if (!count || known.rows.length !== 2)
        throw new Error("the environment has no count or no user-5, user-6");
      const planned = { subjects: count.subjects, limit: 10_000, refused: 0 };
      // Rows this transaction read from subjects so far (its own statistics, not flushed yet).
      const fetched = async () =>
        Number(
          (
            await client.query<{ n: string }>(
              `SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) AS n
               FROM pg_stat_xact_user_tables WHERE relname = 'subjects'`,
            )
          ).rows[0]?.n ?? 0,
        );
      await client.query("BEGIN");
      const before = await fetched();
      await client.query(
        importWriteStatement(
          importOf(ref.environmentId, planned, { updates: known.rows.map((row) => row.id) }),
        ),
      );
      const read = (await fetched()) - before;
      await client.query("ROLLBACK");
      // The two subjects updated; a plan that reads every subject to find them read some 3,000.
      expect(read).toBeLessThanOrEqual(2);
    } finally {
      client.release();
      writePlanned = undefined;
    }
  });

  it("names the batch's known subjects, erased ones left out, and the environment's count", async () => {
    const state = await readImportState(pool, ref, ["user-1", "user-2", "user-3", "new-1"]);
    expect([...state.known.keys()].sort()).toEqual(["user-1", "user-3"]);
    expect(state.subjects).toBe(SUBJECTS - 1);
    expect(state.limit).toBe(10_000);
  });
});

/** An import of `inserts` new external ids and updates of `updates` subjects, planned from `planned`. */
function importOf(
  environmentId: string,
  planned: ImportWrite["planned"],
  change: { inserts?: string[]; updates?: string[] },
): ImportWrite {
  const event = eventEnvelope({ type: "subject.imported", environmentId, data: {} });
  return {
    environmentId,
    planned,
    updates: (change.updates ?? []).map((id) => ({ id, profile: { seen: true }, mode: "self_managed" })),
    inserts: (change.inserts ?? []).map((externalId) => ({
      id: newId(),
      externalId,
      profile: {},
      mode: "self_managed",
    })),
    audit: {
      id: newId(),
      organization_id: ref.organizationId,
      app_id: ref.appId,
      environment_id: environmentId,
      actor_kind: "api_key",
      actor_id: newId(),
      action: "subjects.imported",
      resource_type: "subject_batch",
      resource_id: newId(),
      request_id: null,
      metadata: {},
      created_at: new Date().toISOString(),
    },
    event: outboxValues(eventMessage(event)),
  };
}

/** Where the environment's count row stands: its physical place changes with every version written. */
async function countRow(environmentId: string): Promise<{ subjects: number; ctid: string } | undefined> {
  const found = await pool.query<{ subjects: number; ctid: string }>(
    "SELECT subjects, ctid::text FROM subject_counts WHERE environment_id = $1",
    [environmentId],
  );
  return found.rows[0];
}

/** Runs an import's write in a transaction of its own (under the count's lock when `locked`): false when not admitted. */
async function written(write: ImportWrite, options: { locked?: boolean } = {}): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    if (options.locked) await lockSubjectCount(tx, write.environmentId);
    await writeImport(tx, write, {});
  }).then(
    () => true,
    (error: { code?: string }) => {
      if (error.code === NOT_ADMITTED) return false;
      throw error;
    },
  );
}

/** The environment's (`$1`) count lock, held shared, as the next release's imports far from the limit take it. */
const SHARED_COUNT_LOCK =
  "SELECT pg_advisory_xact_lock_shared(hashtextextended('subject_count:' || $1::text, 0))";

/** Whether another session could take the environment's count lock exclusively right now. */
async function countLockFree(): Promise<boolean> {
  const other = await pool.connect();
  try {
    await other.query("BEGIN");
    const taken = await other.query<{ ok: boolean }>(
      "SELECT pg_try_advisory_xact_lock(hashtextextended('subject_count:' || $1::text, 0)) AS ok",
      [ref.environmentId],
    );
    await other.query("ROLLBACK");
    return taken.rows[0]?.ok === true;
  } finally {
    other.release();
  }
}

/** Adds `n` to the environment's (`$1`) shard 0, as the count's triggers add (a shard is made on its first write). */
function addToShard(n: number): string {
  return `INSERT INTO subject_count_shards (environment_id, shard, subjects) VALUES ($1, 0, ${n})
          ON CONFLICT (environment_id, shard) DO UPDATE SET subjects = subject_count_shards.subjects + ${n}`;
}

/** Whether a statement in the test database comes to wait for a lock before `write` settles (or 5 s pass). */
async function waitsForLock(write: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const done = () => {
    settled = true;
  };
  write.then(done, done);
  for (const deadline = Date.now() + 5_000; Date.now() < deadline && !settled; ) {
    const waiting = await pool.query(
      "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
    );
    if (waiting.rowCount) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return false;
}

describe("an import's write", () => {
  it("is not admitted in an environment that has no count yet, and writes nothing; locked, it is", async () => {
    const environmentId = newId();
    await pool.query("INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, $3, 'New')", [
      environmentId,
      ref.appId,
      `new-${environmentId}`,
    ]);
    await pool.query("INSERT INTO quotas (environment_id) VALUES ($1)", [environmentId]);
    const planned = { subjects: 0, limit: 10_000, refused: 0 };
    expect(await written(importOf(environmentId, planned, { inserts: ["first"] }))).toBe(false);
    const none = await pool.query("SELECT 1 FROM subjects WHERE environment_id = $1", [environmentId]);
    expect(none.rowCount).toBe(0);
    expect(await written(importOf(environmentId, planned, { inserts: ["first"] }), { locked: true })).toBe(
      true,
    );
    expect((await countRow(environmentId))?.subjects).toBe(1);
  });

  it("writes no version of the count when it creates no subject, and counts each one it creates", async () => {
    const known = await pool.query<{ id: string }>(
      "SELECT id FROM subjects WHERE environment_id = $1 AND external_id = 'user-9'",
      [ref.environmentId],
    );
    const before = await countRow(ref.environmentId);
    if (!before || !known.rows[0]) throw new Error("the environment has no count or no user-9");
    const planned = { subjects: before.subjects, limit: 10_000, refused: 0 };
    expect(await written(importOf(ref.environmentId, planned, { updates: [known.rows[0].id] }))).toBe(true);
    expect(await countRow(ref.environmentId)).toEqual(before);
    expect(await written(importOf(ref.environmentId, planned, { inserts: ["added-1", "added-2"] }))).toBe(
      true,
    );
    expect((await countRow(ref.environmentId))?.subjects).toBe(planned.subjects + 2);
  });

  it("is not admitted when the count moved since its plan and the plan refused some", async () => {
    const before = await countRow(ref.environmentId);
    if (!before) throw new Error("the environment has no count");
    const stale = { subjects: before.subjects - 1, limit: 10_000, refused: 1 };
    expect(await written(importOf(ref.environmentId, stale, { inserts: ["late"] }))).toBe(false);
    expect(await countRow(ref.environmentId)).toEqual(before);
  });

  it("has committed, and let go of the count's lock, once it answers", async () => {
    const before = await countRow(ref.environmentId);
    if (!before) throw new Error("the environment has no count");
    const planned = { subjects: before.subjects, limit: 10_000, refused: 0 };
    const write = importOf(ref.environmentId, planned, { inserts: ["committed-with-its-write"] });
    await withTransaction(pool, async (tx) => {
      await writeImport(tx, write, {});
      // Still inside the transaction's work: another session sees the subject and takes the lock.
      const other = await pool.connect();
      try {
        await other.query("BEGIN");
        const locked = await other.query(
          "SELECT subjects FROM subject_counts WHERE environment_id = $1 FOR UPDATE NOWAIT",
          [ref.environmentId],
        );
        expect(locked.rows[0]?.subjects).toBe(before.subjects + 1);
        expect(await countLockFree()).toBe(true);
        await other.query("ROLLBACK");
      } finally {
        other.release();
      }
    });
  });

  it("waits for the next release's imports, which hold the count's lock shared, and counts what they committed", async () => {
    const { subjects } = await readImportState(pool, ref, []);
    const holder = await pool.connect();
    try {
      // As the next release's import does far from the limit: the count's lock shared, its own
      // shard locked and 2 subjects counted in it, not committed yet.
      await holder.query("BEGIN");
      await holder.query(SHARED_COUNT_LOCK, [ref.environmentId]);
      await holder.query(addToShard(2), [ref.environmentId]);
      const write = written(
        importOf(ref.environmentId, { subjects, limit: subjects + 2, refused: 0 }, { inserts: ["late"] }),
      );
      expect(await waitsForLock(write)).toBe(true);
      await holder.query("COMMIT");
      // Planned with room for its one subject; the 2 committed meanwhile took it.
      expect(await write).toBe(false);
    } finally {
      holder.release();
      await pool.query(addToShard(-2), [ref.environmentId]);
    }
  });

  it("waits for the previous release's import, which holds the count's row, and counts what it committed", async () => {
    const { subjects } = await readImportState(pool, ref, []);
    const holder = await pool.connect();
    try {
      // The previous release's import: the row locked, then 2 subjects written (its triggers count
      // them in the row and in a shard), not committed yet.
      await holder.query("BEGIN");
      await holder.query("SELECT 1 FROM subject_counts WHERE environment_id = $1 FOR UPDATE", [
        ref.environmentId,
      ]);
      await holder.query(
        `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
         VALUES (gen_random_uuid(), $1, 'previous-1', 'self_managed', '{}'),
                (gen_random_uuid(), $1, 'previous-2', 'self_managed', '{}')`,
        [ref.environmentId],
      );
      const write = written(
        importOf(ref.environmentId, { subjects, limit: subjects + 2, refused: 0 }, { inserts: ["later"] }),
      );
      expect(await waitsForLock(write)).toBe(true);
      // Waiting for the row, it holds nothing the previous release's import could wait for.
      expect(await countLockFree()).toBe(true);
      await holder.query("COMMIT");
      expect(await write).toBe(false);
      expect((await readImportState(pool, ref, [])).subjects).toBe(subjects + 2);
    } finally {
      holder.release();
    }
  });

  it("commits the request's answer with it, under an Idempotency-Key, as the key's outcome", async () => {
    const before = await countRow(ref.environmentId);
    if (!before) throw new Error("the environment has no count");
    const planned = { subjects: before.subjects, limit: 10_000, refused: 0 };
    const key: KeyInFlight = {
      rowId: `key-${newId()}`,
      fingerprint: "fingerprint",
      state: "open",
      sealAnswer: (answer) => ({
        encoded: JSON.stringify(answer),
        sealed: Buffer.from(JSON.stringify(answer)),
      }),
    };
    const answer = { batch: "answered" };
    await runUnderKey(key, () =>
      withTransaction(pool, async (tx) => {
        await writeImport(
          tx,
          importOf(ref.environmentId, planned, { inserts: ["answered-with-its-write"] }),
          answer,
        );
        // Committed with the write: the key's row and its outcome, seen from another session.
        const stored = await pool.query<{ outcome: Buffer }>(
          "SELECT outcome FROM idempotency_keys WHERE id = $1",
          [key.rowId],
        );
        expect(stored.rows[0]?.outcome.toString()).toBe(JSON.stringify(answer));
      }),
    );
    expect(key.state).toBe("recorded");
    // The interceptor finds the answer it would store already committed.
    expect(key.committedAnswer).toBe(JSON.stringify(answer));
  });
});
