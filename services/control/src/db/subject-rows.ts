import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AppError, newId, pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import { type Program, ProgramSchema, type Subject, SubjectSchema } from "@evalp/proto/control/v1/subject";

export type SubjectRow = {
  id: string;
  environment_id: string;
  /** NULL once the subject is erased. */
  external_id: string | null;
  identity_mode: string;
  profile: JsonObject;
  created_at: Date;
  updated_at: Date;
  erased_at: Date | null;
};
export type ProgramRow = { id: string; environment_id: string; name: string; created_at: Date };

export const SUBJECT_COLUMNS =
  "id, environment_id, external_id, identity_mode, profile, created_at, updated_at, erased_at";
export const PROGRAM_COLUMNS = "id, environment_id, name, created_at";

export function subjectMessage(row: SubjectRow): Subject {
  return create(SubjectSchema, {
    id: row.id,
    environmentId: row.environment_id,
    externalId: row.external_id ?? "",
    identityMode: row.identity_mode,
    profile: row.profile,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
  });
}

/** What reading an erased subject answers: 404 `subject_erased`, its id and when (no personal data is left). */
export function subjectErased(subjectId: string, erasedAt: Date): AppError {
  return new AppError("subject_erased", "This subject was erased.", {
    resource: "subject",
    subject_id: subjectId,
    erased_at: erasedAt.toISOString(),
  });
}

export function programMessage(row: ProgramRow): Program {
  return create(ProgramSchema, {
    id: row.id,
    environmentId: row.environment_id,
    name: row.name,
    createdAt: timestampFromDate(row.created_at),
  });
}

/** A subject of the environment (erased or not); `lock` holds its row for the rest of the transaction. */
export async function findSubject(
  db: Queryable,
  environmentId: string | undefined,
  subjectId: string,
  lock = false,
): Promise<SubjectRow | undefined> {
  const found = await db.query<SubjectRow>(
    `SELECT ${SUBJECT_COLUMNS} FROM subjects WHERE id = $1 AND environment_id = $2 ${lock ? "FOR UPDATE" : ""}`,
    [subjectId, environmentId],
  );
  return found.rows[0];
}

/** A page of an environment's subjects (erased ones left out), newest first, of one external id when given. */
export async function listSubjectRows(
  db: Queryable,
  environmentId: string | undefined,
  externalId: string | undefined,
  page: PageRequest | undefined,
): Promise<SubjectRow[]> {
  const clause = pageClause(page, 3);
  const found = await db.query<SubjectRow>(
    `SELECT ${SUBJECT_COLUMNS} FROM subjects
     WHERE environment_id = $1 AND erased_at IS NULL AND ($2::text IS NULL OR external_id = $2)
       AND ${clause.where} ${clause.tail}`,
    [environmentId, externalId ?? null, ...clause.params],
  );
  return found.rows;
}

export async function findProgram(
  db: Queryable,
  environmentId: string | undefined,
  programId: string,
): Promise<ProgramRow | undefined> {
  const found = await db.query<ProgramRow>(
    `SELECT ${PROGRAM_COLUMNS} FROM programs WHERE id = $1 AND environment_id = $2`,
    [programId, environmentId],
  );
  return found.rows[0];
}

/** A page of an environment's programs, newest first. */
export async function listProgramRows(
  db: Queryable,
  environmentId: string | undefined,
  page: PageRequest | undefined,
): Promise<ProgramRow[]> {
  const clause = pageClause(page, 2);
  const found = await db.query<ProgramRow>(
    `SELECT ${PROGRAM_COLUMNS} FROM programs WHERE environment_id = $1 AND ${clause.where} ${clause.tail}`,
    [environmentId, ...clause.params],
  );
  return found.rows;
}

/** The environment's programs: the `programs` quota's usage. */
export async function countPrograms(db: Queryable, environmentId: string): Promise<number> {
  const counted = await db.query<{ programs: number }>(
    "SELECT count(*)::int AS programs FROM programs WHERE environment_id = $1",
    [environmentId],
  );
  return counted.rows[0]?.programs ?? 0;
}

/** Inserts a program. */
export async function insertProgram(db: Queryable, environmentId: string, name: string): Promise<ProgramRow> {
  const inserted = await db.query<ProgramRow>(
    `INSERT INTO programs (id, environment_id, name) VALUES ($1, $2, $3) RETURNING ${PROGRAM_COLUMNS}`,
    [newId(), environmentId, name],
  );
  return inserted.rows[0] as ProgramRow;
}
