import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { HandlerContext } from "@connectrpc/connect";
import type { RequireEnvironment } from "@evalp/kit";
import { withTransaction } from "@evalp/kit";
import {
  type GetAgentInterviewRequest,
  type GetAgentInterviewResponse,
  GetAgentInterviewResponseSchema,
  type PutAgentPricesRequest,
  type PutAgentPricesResponse,
  PutAgentPricesResponseSchema,
  type ResolveProposalRequest,
  type ResolveProposalResponse,
  ResolveProposalResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { replacePrices } from "../db/agent.js";
import { requireInterview } from "../db/interviews.js";
import type { Deps } from "../deps.js";
import { runStep, snapshotOfRow } from "../steps.js";
import { inProgress } from "./command.js";
import { decide, pendingProposal } from "./proposal-commands.js";
import { requireAgent } from "./scope.js";

/** `GET /v1/agent/interview`: the snapshot as the agent's token's interview stands. */
export function getAgentInterview(deps: Deps) {
  return async (req: GetAgentInterviewRequest): Promise<GetAgentInterviewResponse> => {
    const agent = await requireAgent(deps.pool, req.agent);
    const interview = await requireInterview(deps.pool, agent.evaluation.id);
    return create(GetAgentInterviewResponseSchema, { interview: snapshotOfRow(interview) });
  };
}

/**
 * `POST /v1/participant/interview/proposals/{id}/confirm|reject` (docs/interview.md#the-agent-protocol): the participant's
 * tap on the pending proposal (404 `not_found` for any other id).
 */
export function resolveProposal(deps: Deps) {
  return async (req: ResolveProposalRequest): Promise<ResolveProposalResponse> => {
    const interview = await runStep(deps, req.participant, async (step) => {
      inProgress(step);
      const proposal = pendingProposal(step, req.proposalId);
      const decision = req.decision === "confirm" ? "confirm" : "reject";
      await decide(step, proposal, decision, {
        via: "tap",
        ...(req.reason === undefined ? {} : { reason: req.reason }),
      });
      return step.interview;
    });
    return create(ResolveProposalResponseSchema, { interview: snapshotOfRow(interview) });
  };
}

/** `PUT ENV/agent-prices`: the environment's price table, replaced as a whole. */
export function putAgentPrices(deps: Deps, requireEnvironment: RequireEnvironment) {
  return async (req: PutAgentPricesRequest, ctx: HandlerContext): Promise<PutAgentPricesResponse> => {
    const environment = await requireEnvironment(req.environment, ctx);
    const updatedAt = await withTransaction(deps.pool, async (tx) => {
      const now = new Date();
      await replacePrices(tx, environment.environmentId, req.prices, now);
      return now;
    });
    return create(PutAgentPricesResponseSchema, {
      prices: req.prices,
      updatedAt: timestampFromDate(updatedAt),
    });
  };
}
