import { create, type JsonObject } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
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
