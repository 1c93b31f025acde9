import { create } from "@bufbuild/protobuf";
import { isUuid, notFound } from "@evalp/kit";
import {
  type GetProgramRequest,
  type GetProgramResponse,
  GetProgramResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { requireEnvironment } from "../db/scope.js";
import { findProgram, programMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/** A program of the environment; other planes use it to check the programs they are told of. */
export function getProgram(deps: Deps) {
  return async (req: GetProgramRequest): Promise<GetProgramResponse> => {
    await requireEnvironment(deps.pool, req.environment);
    if (!isUuid(req.programId)) throw notFound("program");
    const row = await findProgram(deps.pool, req.environment?.environmentId, req.programId);
    if (!row) throw notFound("program");
    return create(GetProgramResponseSchema, { program: programMessage(row) });
  };
}
