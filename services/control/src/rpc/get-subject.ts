import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetSubjectRequest,
  type GetSubjectResponse,
  GetSubjectResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { SUBJECT_COLUMNS, type SubjectRow, subjectMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

export function getSubject(deps: Deps) {
  return async (req: GetSubjectRequest): Promise<GetSubjectResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    if (!isUuid(req.subjectId)) throw notFound("subject");
    const found = await deps.pool.query<SubjectRow>(
      `SELECT ${SUBJECT_COLUMNS} FROM subjects WHERE id = $1 AND environment_id = $2`,
      [req.subjectId, req.environment?.environmentId],
    );
    const row = found.rows[0];
    if (!row) throw notFound("subject");
    return create(GetSubjectResponseSchema, { subject: subjectMessage(row) });
  };
}
