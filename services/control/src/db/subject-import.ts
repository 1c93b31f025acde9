import type { JsonObject } from "@bufbuild/protobuf";
import {
  type AuditRecord,
  commitWith,
  isUuid,
  noteOutboxRow,
  notFound,
  OUTBOX_COLUMNS,
  type OutboxValues,
  type PoolClient,
  preparedStatement,
  type Queryable,
} from "@evalp/kit";
import type pg from "pg";
import { AUDIT_COLUMNS, auditValues } from "./audit.js";

/*
 * An import's statements. The `active_subjects` quota is kept exact by the environment's count,
 * the sum of its rows of `subject_count_shards` (kept by triggers, migration 008), under its row
 * of `subject_counts` (still kept by its triggers, as the previous release locks and reads it)
 * and its count's advisory lock: every write of an import takes both, reads the count as it
 * stands then (in a snapshot taken after the locks, whatever the statement's own), and writes
 * only if the count still admits what was planned, in one statement. So
 * an import reads, plans, and writes in two round trips, in a short transaction that only adds
 * the record of the request's Idempotency-Key; the writing statement goes with the commit (and
 * the request's stored answer), so the lock lives for that statement and the commit, the only
 * time imports into one environment wait for each other. A write whose plan the count no longer
 * admits fails and writes nothing; the import then runs as a transaction that takes the lock
 * before it reads.
 */

/** What an import plans from: the limit, the subjects counted, the batch's external ids already known. */
export type ImportState = { limit: number; subjects: number; known: Map<string, string> };

/** What an import writes: the subjects, its audit record and its event's outbox row. */
export type ImportWrite = {
  environmentId: string;
  /** The count the plan was made with, the limit it was made under, and how many it refused for it. */
  planned: { subjects: number; limit: number; refused: number };
  updates: Array<{ id: string; profile: JsonObject; mode: string }>;
  inserts: Array<{ id: string; externalId: string; profile: JsonObject; mode: string }>;
  audit: AuditRecord;
  event: OutboxValues;
};

/** The count of environment `$1`, as its shards sum it in the statement's snapshot (0 with none). */
export const SUBJECTS_COUNTED =
  "SELECT COALESCE(sum(subjects), 0)::bigint AS subjects FROM subject_count_shards WHERE environment_id = $1";

/**
 * Prepared: every import runs it (kit's preparedStatement). Erased subjects are left out by the
 * aggregate's FILTER, not the WHERE: a WHERE holding `erased_at IS NULL` lets the planner pick the
 * list's partial index (`subjects_page`, environment then time), and a generic plan made while
 * the environment was small kept it, so every import read every subject of its environment (4,400
 * buffers per call at 2,000 subjects). Here only the unique (environment, external id) index fits.
 */
export const READ_IMPORT_STATE = preparedStatement(
  "control.read_import_state",
  `SELECT q.active_subjects AS limit, (${SUBJECTS_COUNTED}) AS subjects,
          COALESCE((SELECT json_object_agg(external_id, id) FILTER (WHERE erased_at IS NULL) FROM subjects
                    WHERE environment_id = $1 AND external_id = ANY($4)), '{}') AS known
   FROM environments e JOIN apps a ON a.id = e.app_id
   JOIN quotas q ON q.environment_id = e.id
   WHERE e.id = $1 AND a.id = $2 AND a.organization_id = $3`,
);

type EnvironmentRef = { organizationId: string; appId: string; environmentId: string };

/**
 * The scope check (organization → app → environment, 404 otherwise) and the import's state, in
 * one statement (read by `importStateOf`).
 */
export function importStateRead(ref: EnvironmentRef | undefined, externalIds: string[]): pg.QueryConfig {
  if (!ref || !isUuid(ref.organizationId) || !isUuid(ref.appId) || !isUuid(ref.environmentId)) {
    throw notFound("environment");
  }
  return READ_IMPORT_STATE([ref.environmentId, ref.appId, ref.organizationId, externalIds]);
}

/** The import's state from `importStateRead`'s result; 404 when the scope does not hold. */
export function importStateOf(found: pg.QueryResult | undefined): ImportState {
  const row = found?.rows[0] as
    | { limit: number; subjects: string; known: Record<string, string> }
    | undefined;
  if (!row) throw notFound("environment");
  return { limit: row.limit, subjects: Number(row.subjects), known: new Map(Object.entries(row.known)) };
}

/** Reads the import's state (`importStateRead`) on `db`. */
export async function readImportState(
  db: Queryable,
  ref: EnvironmentRef | undefined,
  externalIds: string[],
): Promise<ImportState> {
  return importStateOf(await db.query(importStateRead(ref, externalIds)));
}

/**
 * Makes the environment's `subject_counts` row at 0 if it has none yet, and locks it. The upsert
 * writes a version of the row even when it changes nothing, so only the locked attempt, which
 * must make the row, runs it.
 */
const MAKE_SUBJECT_COUNT = preparedStatement(
  "control.make_subject_count",
  `INSERT INTO subject_counts (environment_id, subjects) VALUES ($1, 0)
   ON CONFLICT (environment_id) DO UPDATE SET subjects = subject_counts.subjects`,
);

/**
 * Locks the environment's count and reads it (`locked_subject_count`, migration 008: the
 * `subject_counts` row, then the count's advisory lock, then the shards' sum in a snapshot taken
 * after both), writing no row: an upsert's version, beside the triggers', doubled the row's dead
 * versions, its WAL and its pruning. NULL for an environment without its row yet, and the write
 * is not admitted.
 */
const COUNTER = "SELECT locked_subject_count($1) AS subjects";

/** Takes the environment's count lock for the rest of the transaction, its row made if missing. */
export async function lockSubjectCount(db: Queryable, environmentId: string): Promise<void> {
  await db.query(MAKE_SUBJECT_COUNT([environmentId]));
  // A statement of its own: the function's first query must see the row made by the one before.
  await db.query(COUNTER, [environmentId]);
}

/**
 * Prepared: every import runs it, and Postgres soon keeps one generic plan for it. The update
 * finds its subjects with `id = ANY($5)` besides the join: a generic plan made while the table was
 * small otherwise joined the batch to every subject not erased (through the list's partial index),
 * and kept doing so as the table grew, reading the whole table to update a few rows.
 */
const WRITE_IMPORT = preparedStatement(
  "control.write_import",
  `WITH counter AS (${COUNTER}),
     admitted AS (
       SELECT 1 FROM counter
       WHERE subjects = $2 OR ($3 = 0 AND subjects + cardinality($8::uuid[]) <= $4)
     ),
     updated AS (
       UPDATE subjects s
       SET profile = u.profile, identity_mode = u.mode,
           updated_at = date_trunc('milliseconds', clock_timestamp())
       FROM unnest($5::uuid[], $6::jsonb[], $7::text[]) AS u (id, profile, mode)
       WHERE s.id = ANY($5::uuid[]) AND s.id = u.id AND s.erased_at IS NULL AND EXISTS (SELECT 1 FROM admitted)
     ),
     inserted AS (
       INSERT INTO subjects (id, environment_id, external_id, identity_mode, profile)
       SELECT i.id, $1, i.external_id, i.mode, i.profile
       FROM unnest($8::uuid[], $9::text[], $10::text[], $11::jsonb[]) AS i (id, external_id, mode, profile)
       WHERE EXISTS (SELECT 1 FROM admitted)
     ),
     audited AS (
       INSERT INTO audit_events (${AUDIT_COLUMNS})
       SELECT $12::uuid, $13::uuid, $14::uuid, $15::uuid, $16::text, $17::text, $18::text, $19::text, $20::text,
              $21::text, $22::jsonb, $23::timestamptz
       WHERE EXISTS (SELECT 1 FROM admitted)
     ),
     announced AS (
       INSERT INTO outbox (${OUTBOX_COLUMNS})
       SELECT $24::uuid, $25::text, $26::text, $27::uuid, $28::jsonb,
              COALESCE($29::timestamptz, date_trunc('milliseconds', clock_timestamp())), $30::jsonb
       WHERE EXISTS (SELECT 1 FROM admitted)
     )
     SELECT CASE WHEN EXISTS (SELECT 1 FROM admitted) THEN true ELSE import_not_admitted() END AS admitted`,
);

/** The SQLSTATE of `import_not_admitted()`: the count no longer admits the plan, nothing was written. */
export const NOT_ADMITTED = "EV001";

/**
 * Writes an import in one statement, if the count, locked, still admits its plan: unchanged since
 * the plan was made, or (when the plan refused nothing) with room for every insert; and commits
 * it, with `answer` (the RPC's) stored as the outcome of the request's Idempotency-Key, in the
 * same round trip (kit's commitWith): the count's lock is held for the statement and the commit
 * only. A write not admitted fails with NOT_ADMITTED, a subject created meanwhile with one of the
 * inserts' external ids with a unique violation: either writes nothing and commits nothing.
 */
export async function writeImport(db: PoolClient, write: ImportWrite, answer: unknown): Promise<void> {
  // Published by the process's relay once the import's transaction commits.
  noteOutboxRow(db, write.event);
  await commitWith(db, importWriteStatement(write), answer);
}

/** The statement of `writeImport`. */
export function importWriteStatement(write: ImportWrite): pg.QueryConfig {
  const { planned, updates, inserts } = write;
  return WRITE_IMPORT([
    write.environmentId,
    planned.subjects,
    planned.refused,
    planned.limit,
    updates.map((u) => u.id),
    updates.map((u) => JSON.stringify(u.profile)),
    updates.map((u) => u.mode),
    inserts.map((i) => i.id),
    inserts.map((i) => i.externalId),
    inserts.map((i) => i.mode),
    inserts.map((i) => JSON.stringify(i.profile)),
    ...auditValues(write.audit),
    ...write.event,
  ]);
}
