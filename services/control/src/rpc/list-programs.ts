import { create } from "@bufbuild/protobuf";
import { pageClause, pageResult } from "@evalp/kit";
import {
  type ListProgramsRequest,
  type ListProgramsResponse,
  ListProgramsResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { PROGRAM_COLUMNS, type ProgramRow, programMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

export function listPrograms(deps: Deps) {
  return async (req: ListProgramsRequest): Promise<ListProgramsResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    const page = pageClause(req.page, 2);
    const found = await deps.pool.query<ProgramRow>(
      `SELECT ${PROGRAM_COLUMNS} FROM programs WHERE environment_id = $1 AND ${page.where} ${page.tail}`,
      [req.environment?.environmentId, ...page.params],
    );
    const { rows, info } = pageResult(found.rows, req.page);
    return create(ListProgramsResponseSchema, { items: rows.map(programMessage), page: info });
  };
}
