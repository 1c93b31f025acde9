import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetSubjectRequest,
  type GetSubjectResponse,
  GetSubjectResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { findSubject, subjectErased, subjectMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/** One subject; an erased one answers 404 `subject_erased` (docs/subjects.md#erasure). */
export function getSubject(deps: Deps) {
  return async (req: GetSubjectRequest): Promise<GetSubjectResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    if (!isUuid(req.subjectId)) throw notFound("subject");
    const row = await findSubject(deps.pool, req.environment?.environmentId, req.subjectId);
    if (!row) throw notFound("subject");
    if (row.erased_at) throw subjectErased(row.id, row.erased_at);
    return create(GetSubjectResponseSchema, { subject: subjectMessage(row) });
  };
}
