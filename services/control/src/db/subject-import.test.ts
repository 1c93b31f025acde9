import { setTimeout as sleep } from "node:timers/promises";
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
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrations } from "../server.js";
import { storeEnvironment, storeSubjects } from "./database.test-support.js";
import {
  IMPORT_MOST,
  type ImportWrite,
  importWriteStatement,
  lockSubjectCount,
  NOT_ADMITTED,
  READ_IMPORT_STATE,
  readImportState,
  SHARED_ROOM,
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

/** The environment's subjects, `user-1` … `user-<count>`, `user-2` erased. */
async function storeSubjectsErasingOne(count: number): Promise<void> {
  await storeSubjects(pool, ref.environmentId, count);
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
  await storeEnvironment(pool, ref);
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
      // The one plan the read keeps (migration 011's function keeps it generic), made here while
      // the environment has no subjects, as in a new environment's first imports.
      const statement = READ_IMPORT_STATE([ref.environmentId, ref.appId, ref.organizationId, ["user-7"]]);
      await client.query(statement);
      // The write's plan too (rolled back; the plan is kept).
      await client.query("BEGIN");
      await client.query(
        importWriteStatement(
          importOf(ref.environmentId, { subjects: 0, limit: 10_000, refused: 0 }, { updates: [newId()] }),
        ),
      );
      await client.query("ROLLBACK");
      writePlanned = client;
      await storeSubjectsErasingOne(SUBJECTS);
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
      const count = await countOf(ref.environmentId);
      if (known.rows.length !== 2) throw new Error("the environment has no user-5, user-6");
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

  it("is read with one plan for batches of any size, planned once per connection", async () => {
    // The plans Postgres runs, as auto_explain logs them (to this client, as notices): the read's
    // own query, nested in migration 011's function, must name the batch's ids as a parameter
    // (a generic plan, made once) rather than as the values a custom plan is made for each time.
    // In an environment of 3,000 subjects a custom plan for a batch of one is priced far below
    // the generic plan (made for 10 ids), so without the function's `plan_cache_mode` Postgres
    // makes a custom plan at every call.
    const client = await pool.connect();
    const logged: string[] = [];
    const notice = (message: { message?: string }) => logged.push(message.message ?? "");
    client.on("notice", notice);
    try {
      await client.query("LOAD 'auto_explain'");
      await client.query(
        "SET auto_explain.log_min_duration = 0; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice",
      );
      const batches = [
        ["user-1"],
        ["user-1", "user-3", "new-1"],
        Array.from({ length: 100 }, (_, n) => `user-${n + 1}`),
      ];
      for (const batch of [...batches, ...batches, ...batches]) {
        const state = await readImportState(client, ref, batch);
        expect(state.known.get("user-1")).toMatch(/^[0-9a-f-]{36}$/);
      }
      const lookUps = logged.filter((plan) => plan.includes("subjects_environment_id_external_id_key"));
      expect(lookUps).toHaveLength(9);
      for (const plan of lookUps) expect(plan).toMatch(/external_id = ANY \(\$\d+\)/);
    } finally {
      client.off("notice", notice);
      await client.query("RESET ALL");
      client.release();
    }
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

/**
 * The environment's count, and where its shards' rows stand: a row's physical place changes with
 * every version written.
 */
async function countOf(environmentId: string): Promise<{ subjects: number; versions: string[] }> {
  const found = await pool.query<{ subjects: string; ctid: string }>(
    "SELECT subjects, ctid::text FROM subject_count_shards WHERE environment_id = $1 ORDER BY shard",
    [environmentId],
  );
  return {
    subjects: found.rows.reduce((sum, row) => sum + Number(row.subjects), 0),
    versions: found.rows.map((row) => row.ctid),
  };
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
    await sleep(10);
  }
  return false;
}

/** Runs `use` on a session of its own, which it leaves with no transaction open, and releases it. */
async function withSession(use: (session: PoolClient) => Promise<void>): Promise<void> {
  const session = await pool.connect();
  try {
    await use(session);
  } finally {
    await session.query("ROLLBACK");
    session.release();
  }
}

/** Planned from the count as it is now, under `limit`, refusing nothing. */
async function plannedNow(limit: (subjects: number) => number): Promise<ImportWrite["planned"]> {
  const { subjects } = await countOf(ref.environmentId);
  return { subjects, limit: limit(subjects), refused: 0 };
}

/** Far from any limit: the count's lock shared. */
const FAR = () => 1_000_000;

describe("an import's write", () => {
  it("is admitted as an environment's first import, with nothing made before it", async () => {
    const environmentId = newId();
    await pool.query("INSERT INTO environments (id, app_id, slug, name) VALUES ($1, $2, $3, 'New')", [
      environmentId,
      ref.appId,
      `new-${environmentId}`,
    ]);
    await pool.query("INSERT INTO quotas (environment_id) VALUES ($1)", [environmentId]);
    const planned = { subjects: 0, limit: 10_000, refused: 0 };
    expect(await written(importOf(environmentId, planned, { inserts: ["first"] }))).toBe(true);
    expect((await countOf(environmentId)).subjects).toBe(1);
    // Near its limit too (the count's lock exclusively).
    const near = { subjects: 1, limit: 2, refused: 0 };
    expect(await written(importOf(environmentId, near, { inserts: ["second"] }))).toBe(true);
    expect((await countOf(environmentId)).subjects).toBe(2);
  });

  it("writes no version of the count when it creates no subject, and counts each one it creates", async () => {
    const known = await pool.query<{ id: string }>(
      "SELECT id FROM subjects WHERE environment_id = $1 AND external_id = 'user-9'",
      [ref.environmentId],
    );
    const before = await countOf(ref.environmentId);
    if (!known.rows[0]) throw new Error("the environment has no user-9");
    const planned = { subjects: before.subjects, limit: 10_000, refused: 0 };
    expect(await written(importOf(ref.environmentId, planned, { updates: [known.rows[0].id] }))).toBe(true);
    expect(await countOf(ref.environmentId)).toEqual(before);
    expect(await written(importOf(ref.environmentId, planned, { inserts: ["added-1", "added-2"] }))).toBe(
      true,
    );
    expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 2);
  });

  it("is not admitted when the count rose since its plan and the plan refused some, and is when it fell", async () => {
    const before = await countOf(ref.environmentId);
    const stale = { subjects: before.subjects - 1, limit: before.subjects, refused: 1 };
    expect(await written(importOf(ref.environmentId, stale, { inserts: ["late"] }))).toBe(false);
    expect(await countOf(ref.environmentId)).toEqual(before);
    // An erasure lowered the count since the plan: the plan's refusals still hold (as if the
    // import came before the erasure), and its inserts still fit.
    const fell = { subjects: before.subjects + 1, limit: before.subjects + 2, refused: 1 };
    expect(await written(importOf(ref.environmentId, fell, { inserts: ["fits"] }))).toBe(true);
    expect((await countOf(ref.environmentId)).subjects).toBe(before.subjects + 1);
  });

  it("has committed, and let go of the count's lock, once it answers", async () => {
    const planned = await plannedNow((subjects) => subjects + 1);
    const write = importOf(ref.environmentId, planned, { inserts: ["committed-with-its-write"] });
    await withTransaction(pool, async (tx) => {
      await writeImport(tx, write, {});
      // Still inside the transaction's work: another session counts the subject and takes the lock.
      expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 1);
      expect(await countLockFree()).toBe(true);
    });
  });

  it("far from the limit, runs beside another import into the environment that has not committed", async () => {
    await withSession(async (holder) => {
      const planned = await plannedNow(FAR);
      await holder.query("BEGIN");
      await holder.query(
        importWriteStatement(importOf(ref.environmentId, planned, { inserts: ["beside-1", "beside-2"] })),
      );
      // Written and committed while the first holds its locks, its 2 subjects not committed.
      expect(await written(importOf(ref.environmentId, planned, { inserts: ["beside-3"] }))).toBe(true);
      await holder.query("COMMIT");
      expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 3);
    });
  });

  it("leaves room for a whole import of every other shard beside it, or holds the count's lock alone", async () => {
    expect(SHARED_ROOM).toBe(7 * IMPORT_MOST);
    await withSession(async (holder) => {
      const planned = await plannedNow(FAR);
      await holder.query("BEGIN");
      await holder.query(importWriteStatement(importOf(ref.environmentId, planned, { inserts: ["room-1"] })));
      // One insert and 7 × 100 beside it fit exactly: it runs beside the holder.
      const fits = { ...planned, limit: planned.subjects + 1 + SHARED_ROOM };
      expect(await written(importOf(ref.environmentId, fits, { inserts: ["room-2"] }))).toBe(true);
      // One place less: it waits for the holder, then counts what the holder committed.
      const tight = { subjects: planned.subjects + 1, limit: planned.subjects + 1 + SHARED_ROOM, refused: 0 };
      const waiting = written(importOf(ref.environmentId, tight, { inserts: ["room-3"] }));
      expect(await waitsForLock(waiting)).toBe(true);
      await holder.query("COMMIT");
      expect(await waiting).toBe(true);
      expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 3);
    });
  });

  it("far from the limit, is not admitted when the count it finds no longer leaves that room", async () => {
    const planned = await plannedNow((subjects) => subjects + 1 + SHARED_ROOM);
    expect(await written(importOf(ref.environmentId, planned, { inserts: ["first-in"] }))).toBe(true);
    // Planned from the count before the one above, which took the room.
    expect(await written(importOf(ref.environmentId, planned, { inserts: ["crowded"] }))).toBe(false);
    expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 1);
  });

  it("far from the limit, waits for an import of its shard, one shard's imports taking turns", async () => {
    // Sessions until two are on one shard (their backends' ids alike modulo 8): at most 9.
    const sessions: pg.Client[] = [];
    try {
      const byShard = new Map<number, pg.Client>();
      let pair: [pg.Client, pg.Client] | undefined;
      while (!pair) {
        const session = new pg.Client({ connectionString: database.url });
        await session.connect();
        sessions.push(session);
        await session.query(`SET search_path = ${migrations.schema}`);
        const found = await session.query<{ shard: number }>("SELECT pg_backend_pid() % 8 AS shard");
        const shard = Number(found.rows[0]?.shard);
        const other = byShard.get(shard);
        if (other) pair = [other, session];
        else byShard.set(shard, session);
      }
      const [first, second] = pair;
      // Both far from the limit with no room to spare: whichever counts the other's subject
      // must not be admitted.
      const planned = await plannedNow((subjects) => subjects + 1 + SHARED_ROOM);
      await first.query("BEGIN");
      await first.query(importWriteStatement(importOf(ref.environmentId, planned, { inserts: ["shard-1"] })));
      await second.query("BEGIN");
      const waiting = second.query(
        importWriteStatement(importOf(ref.environmentId, planned, { inserts: ["shard-2"] })),
      );
      expect(await waitsForLock(waiting)).toBe(true);
      await first.query("COMMIT");
      // It counted only once the first had committed: at most one import per shard is admitted
      // and not committed, which is what the room beside each counts on.
      await expect(waiting).rejects.toMatchObject({ code: NOT_ADMITTED });
      await second.query("ROLLBACK");
      expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 1);
    } finally {
      for (const session of sessions) await session.end();
    }
  });

  it("near the limit, waits for imports far from it, which hold the count's lock shared, and counts what they committed", async () => {
    await withSession(async (holder) => {
      const planned = await plannedNow(FAR);
      await holder.query("BEGIN");
      await holder.query(
        importWriteStatement(importOf(ref.environmentId, planned, { inserts: ["far-1", "far-2"] })),
      );
      const near = { ...planned, limit: planned.subjects + 2 };
      const write = written(importOf(ref.environmentId, near, { inserts: ["near"] }));
      expect(await waitsForLock(write)).toBe(true);
      await holder.query("COMMIT");
      // Planned with room for its one subject; the 2 committed meanwhile took it.
      expect(await write).toBe(false);
    });
  });

  it("far from the limit, waits for a locked import, which holds the count's lock exclusively, and counts what it committed", async () => {
    await withSession(async (holder) => {
      const planned = await plannedNow((subjects) => subjects + 1 + SHARED_ROOM);
      // A locked import (a retry, or one near the limit): the count's lock exclusively, then 2
      // subjects written, not committed yet.
      await holder.query("BEGIN");
      await lockSubjectCount(holder, ref.environmentId);
      await holder.query(
        `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
         VALUES (gen_random_uuid(), $1, 'locked-1', 'self_managed', '{}'),
                (gen_random_uuid(), $1, 'locked-2', 'self_managed', '{}')`,
        [ref.environmentId],
      );
      const write = written(importOf(ref.environmentId, planned, { inserts: ["later"] }));
      expect(await waitsForLock(write)).toBe(true);
      await holder.query("COMMIT");
      // Far from the limit as planned, but the 2 committed meanwhile took the room it leaves.
      expect(await write).toBe(false);
      expect((await countOf(ref.environmentId)).subjects).toBe(planned.subjects + 2);
    });
  });

  it("takes the unique keys of its inserts in external id order, so an import beside it waits rather than deadlocks", async () => {
    await withSession(async (holder) => {
      const planned = await plannedNow(FAR);
      // Another writer has inserted `order-p`, not committed yet.
      await holder.query("BEGIN");
      await holder.query(
        `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
         VALUES (gen_random_uuid(), $1, 'order-p', 'self_managed', '{}')`,
        [ref.environmentId],
      );
      // Given as q then p, it inserts p first and waits there, holding no key of q.
      const write = written(importOf(ref.environmentId, planned, { inserts: ["order-q", "order-p"] }));
      expect(await waitsForLock(write)).toBe(true);
      await holder.query(
        `INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
         VALUES (gen_random_uuid(), $1, 'order-q', 'self_managed', '{}')`,
        [ref.environmentId],
      );
      await holder.query("COMMIT");
      await expect(write).rejects.toMatchObject({ code: "23505" });
    });
  });

  it("commits the request's answer with it, under an Idempotency-Key, as the key's outcome", async () => {
    const planned = await plannedNow(FAR);
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
