import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { newId, pageClause, type Queryable } from "@evalp/kit";
import type { PageRequest } from "@evalp/proto/common/v1/page";
import { type Program, ProgramSchema, type Subject, SubjectSchema } from "@evalp/proto/control/v1/subject";

export type SubjectRow = {
  id: string;
  environment_id: string;
  external_id: string;
  identity_mode: string;
  profile: JsonObject;
  created_at: Date;
  updated_at: Date;
};
export type ProgramRow = { id: string; environment_id: string; name: string; created_at: Date };

export const SUBJECT_COLUMNS =
  "id, environment_id, external_id, identity_mode, profile, created_at, updated_at";
export const PROGRAM_COLUMNS = "id, environment_id, name, created_at";

export function subjectMessage(row: SubjectRow): Subject {
  return create(SubjectSchema, {
    id: row.id,
    environmentId: row.environment_id,
    externalId: row.external_id,
    identityMode: row.identity_mode,
    profile: row.profile,
    createdAt: timestampFromDate(row.created_at),
    updatedAt: timestampFromDate(row.updated_at),
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

export async function findSubject(
  db: Queryable,
  environmentId: string | undefined,
  subjectId: string,
): Promise<SubjectRow | undefined> {
  const found = await db.query<SubjectRow>(
    `SELECT ${SUBJECT_COLUMNS} FROM subjects WHERE id = $1 AND environment_id = $2`,
    [subjectId, environmentId],
  );
  return found.rows[0];
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
