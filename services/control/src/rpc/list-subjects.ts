import { create } from "@bufbuild/protobuf";
import { pageResult } from "@evalp/kit";
import {
  type ListSubjectsRequest,
  type ListSubjectsResponse,
  ListSubjectsResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { listSubjectRows, subjectMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/** The environment's subjects, newest first, of one `external_id` when asked; erased ones are not listed. */
export function listSubjects(deps: Deps) {
  return async (req: ListSubjectsRequest): Promise<ListSubjectsResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const found = await listSubjectRows(deps.pool, req.environment?.environmentId, req.externalId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListSubjectsResponseSchema, { items: rows.map(subjectMessage), page: info });
  };
}
