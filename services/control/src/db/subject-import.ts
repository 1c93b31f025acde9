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
 * the sum of its rows of `subject_count_shards` (kept by triggers, migration 008), under the
 * count's locks (`counted_subjects`, migration 009): every write of an import takes them, reads
 * the count as it stands then (in a snapshot taken after the locks, whatever the statement's
 * own), and writes only if the count still admits what was planned, in one statement. An import
 * far from the limit holds the count's lock shared, beside its shard's lock, so imports into one
 * environment run side by side; near the limit it holds the count's lock exclusively, and waits
 * for every import that holds it. So an import reads, plans, and writes in two round trips, in a
 * short transaction that only adds the record of the request's Idempotency-Key; the writing
 * statement goes with the commit (and the request's stored answer), so the locks live for that
 * statement and the commit. A write whose plan the count no longer admits fails and writes
 * nothing; the import then runs as a transaction that takes the count's lock exclusively before
 * it reads.
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
 * Prepared: every import runs it (kit's preparedStatement). The read is migration 011's
 * `import_state`, a PL/pgSQL function whose one plan is kept generic: as a prepared statement
 * Postgres priced its generic plan for a 10-id batch against a custom plan for the batch's own
 * ids, and made custom plans of the same shape on about a third of the imports (~0.3 ms each).
 */
export const READ_IMPORT_STATE = preparedStatement(
  "control.import_state",
  "SELECT subject_limit AS limit, counted AS subjects, known FROM import_state($1, $2, $3, $4)",
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

/** The shards of an environment's count (migration 008), and the most subjects one import adds. */
const SHARDS = 8;
export const IMPORT_MOST = 100;

/**
 * The room an import far from the limit leaves beside its own inserts: what the import of every
 * other shard, holding the count's lock shared and not committed yet, may have added unseen.
 */
export const SHARED_ROOM = (SHARDS - 1) * IMPORT_MOST;

/** Takes the environment's count lock exclusively for the rest of the transaction (`counted_subjects`). */
export async function lockSubjectCount(db: Queryable, environmentId: string): Promise<void> {
  await db.query("SELECT counted_subjects($1, false)", [environmentId]);
}

/**
 * Prepared: every import runs it, and Postgres soon keeps one generic plan for it.
 *
 * `far`: the plan refused nothing and leaves SHARED_ROOM below the limit. Then the write holds the
 * count's lock shared and is admitted if the count it finds still leaves that room: at most 7
 * other imports hold the lock so, each with at most IMPORT_MOST inserts it has checked the same
 * way, so whichever commit, the count stays within the limit. Otherwise it holds the lock
 * exclusively, finds every import that held it committed, and is admitted if the count is at
 * most the one it planned from (erasures lower it without the lock; the write then commits as if
 * before them) or, when it refused nothing, still has room for its inserts.
 *
 * The update finds its subjects with `id = ANY($5)` besides the join: a generic plan made while
 * the table was small otherwise joined the batch to every subject not erased (through the list's
 * partial index), and kept doing so as the table grew, reading the whole table to update a few
 * rows.
 */
const WRITE_IMPORT = preparedStatement(
  "control.write_import",
  `WITH far AS (
       SELECT $3::int = 0 AND cardinality($8::uuid[]) <= ${IMPORT_MOST}
              AND $2::bigint + cardinality($8::uuid[]) + ${SHARED_ROOM} <= $4::bigint AS shared
     ),
     counter AS (SELECT shared, counted_subjects($1, shared) AS subjects FROM far),
     admitted AS (
       SELECT 1 FROM counter
       WHERE CASE WHEN shared THEN subjects + cardinality($8::uuid[]) + ${SHARED_ROOM} <= $4
                  ELSE subjects <= $2 OR ($3 = 0 AND subjects + cardinality($8::uuid[]) <= $4) END
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
 * Writes an import in one statement, if the count, under its locks, still admits its plan (see
 * WRITE_IMPORT); and commits it, with `answer` (the RPC's) stored as the outcome of the request's
 * Idempotency-Key, in the same round trip (kit's commitWith): the count's locks are held for the
 * statement and the commit only. A write not admitted fails with NOT_ADMITTED, a subject created
 * meanwhile with one of the inserts' external ids with a unique violation: either writes nothing
 * and commits nothing.
 */
export async function writeImport(db: PoolClient, write: ImportWrite, answer: unknown): Promise<void> {
  // Published by the process's relay once the import's transaction commits.
  noteOutboxRow(db, write.event);
  await commitWith(db, importWriteStatement(write), answer);
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The statement of `writeImport`. Updates in id order and inserts in external id order: imports
 * of one environment that run side by side take the rows and unique keys they share in one order,
 * so one waits for the other rather than the two waiting for each other.
 */
export function importWriteStatement(write: ImportWrite): pg.QueryConfig {
  const { planned } = write;
  const updates = write.updates.toSorted((a, b) => byText(a.id, b.id));
  const inserts = write.inserts.toSorted((a, b) => byText(a.externalId, b.externalId));
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
