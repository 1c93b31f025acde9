import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import { enforceQuota, requestContext, withTransaction } from "@evalp/kit";
import {
  type CreateProgramRequest,
  type CreateProgramResponse,
  CreateProgramResponseSchema,
} from "@evalp/proto/control/v1/subject";
import { writeAudit } from "../db/audit.js";
import { readQuotas } from "../db/quotas.js";
import { requireEnvironment } from "../db/scope.js";
import { countPrograms, insertProgram, programMessage } from "../db/subject-rows.js";
import type { Deps } from "../deps.js";

/** A new program of the environment, counted against its `programs` quota (kit `enforceQuota`). */
export function createProgram(deps: Deps) {
  return async (req: CreateProgramRequest, ctx: HandlerContext): Promise<CreateProgramResponse> => {
    const context = requestContext(ctx.values);
    const environmentId = req.environment?.environmentId ?? "";
    const row = await withTransaction(deps.pool, async (tx) => {
      await requireEnvironment(tx, req.environment);
      await enforceQuota(tx, {
        environmentId,
        counter: "programs",
        limit: async () => (await readQuotas(tx, environmentId)).programs,
        usage: () => countPrograms(tx, environmentId),
      });
      const program = await insertProgram(tx, environmentId, req.name);
      await writeAudit(tx, context, {
        organizationId: req.environment?.organizationId ?? "",
        appId: req.environment?.appId,
        environmentId,
        action: "program.created",
        resourceType: "program",
        resourceId: program.id,
        metadata: { name: program.name },
      });
      return program;
    });
    return create(CreateProgramResponseSchema, { program: programMessage(row) });
  };
}
