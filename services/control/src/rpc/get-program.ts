import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetProgramRequest,
  type GetProgramResponse,
  GetProgramResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { PROGRAM_COLUMNS, type ProgramRow, programMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/** A program of the environment; other planes use it to check the programs they are told of. */
export function getProgram(deps: Deps) {
  return async (req: GetProgramRequest): Promise<GetProgramResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    if (!isUuid(req.programId)) throw notFound("program");
    const found = await deps.pool.query<ProgramRow>(
      `SELECT ${PROGRAM_COLUMNS} FROM programs WHERE id = $1 AND environment_id = $2`,
      [req.programId, req.environment?.environmentId],
    );
    const row = found.rows[0];
    if (!row) throw notFound("program");
    return create(GetProgramResponseSchema, { program: programMessage(row) });
  };
}
