import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetSubjectErasureRequest,
  type GetSubjectErasureResponse,
  GetSubjectErasureResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { erasureMessage, findErasure } from "../db/subject-erasures.js";
import { findSubject } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/** A subject's erasure as it stands; a subject never erased: 404 (`resource` `subject_erasure`). */
export function getSubjectErasure(deps: Deps) {
  return async (req: GetSubjectErasureRequest): Promise<GetSubjectErasureResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const environmentId = req.environment?.environmentId ?? "";
    if (!isUuid(req.subjectId)) throw notFound("subject");
    const erasure = await findErasure(deps.pool, environmentId, req.subjectId);
    if (erasure) return create(GetSubjectErasureResponseSchema, { erasure: erasureMessage(erasure) });
    const subject = await findSubject(deps.pool, environmentId, req.subjectId);
    throw notFound(subject ? "subject_erasure" : "subject");
  };
}
