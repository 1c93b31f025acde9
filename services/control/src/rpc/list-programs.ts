import { create } from "@bufbuild/protobuf";
import { pageResult } from "@evalp/kit";
import {
  type ListProgramsRequest,
  type ListProgramsResponse,
  ListProgramsResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { listProgramRows, programMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

export function listPrograms(deps: Deps) {
  return async (req: ListProgramsRequest): Promise<ListProgramsResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const found = await listProgramRows(deps.pool, req.environment?.environmentId, req.page);
    const { rows, info } = pageResult(found, req.page);
    return create(ListProgramsResponseSchema, { items: rows.map(programMessage), page: info });
  };
}
