import { create } from "@bufbuild/protobuf";
import type { HandlerContext } from "@connectrpc/connect";
import {
  AppError,
  enforceQuota,
  forwardedCall,
  lockSubjectData,
  type RequireEnvironment,
  refuseErasedSubject,
  withTransaction,
} from "@evalp/kit";
import {
  type CreateEvaluationRequest,
  type CreateEvaluationResponse,
  CreateEvaluationResponseSchema,
} from "@evalp/proto/interview/v1/evaluation";
import { countEvaluations, insertEvaluation } from "../db/evaluations.js";
import { evaluationMessage } from "../db/rows.js";
import type { Deps } from "../deps.js";

/**
 * A new evaluation: a subject (and optionally a program) of the environment, a `published`
 * bundle of its app (else 409 `bundle_not_published`), counted against `evaluations`.
 */
export function createEvaluation(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: CreateEvaluationRequest, ctx: HandlerContext): Promise<CreateEvaluationResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const call = forwardedCall(ctx);
    const [, , bundle] = await Promise.all([
      deps.control.subjects.getSubject({ environment, subjectId: req.subjectId }, call),
      req.programId === undefined
        ? null
        : deps.control.subjects.getProgram({ environment, programId: req.programId }, call),
      deps.platform.bundles.getBundle(
        {
          app: { organizationId: environment.organizationId, appId: environment.appId },
          bundleId: req.bundleId,
        },
        call,
      ),
    ]);
    const status = bundle.bundle?.status ?? "";
    if (status !== "published") {
      throw new AppError("bundle_not_published", "Evaluations run on published bundles only.", {
        bundle_id: req.bundleId,
        status,
      });
    }
    const environmentId = environment.environmentId;
    const row = await withTransaction(deps.pool, async (tx) => {
      // Control said the subject exists; an erasure that began since must not miss this evaluation.
      await lockSubjectData(tx, req.subjectId);
      await refuseErasedSubject(tx, req.subjectId);
      await enforceQuota(tx, {
        environmentId,
        counter: "evaluations",
        limit: async () => {
          const answer = await deps.control.quotas.getLimits({ environmentId }, call);
          return Number(answer.limits?.evaluations ?? 0n);
        },
        usage: () => countEvaluations(tx, environmentId),
      });
      return insertEvaluation(tx, {
        organizationId: environment.organizationId,
        appId: environment.appId,
        environmentId,
        subjectId: req.subjectId,
        bundleId: req.bundleId,
        programId: req.programId ?? null,
      });
    });
    return create(CreateEvaluationResponseSchema, { evaluation: evaluationMessage(row) });
  };
}
