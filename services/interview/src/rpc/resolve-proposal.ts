import { create } from "@bufbuild/protobuf";
import {
  type ResolveProposalRequest,
  type ResolveProposalResponse,
  ResolveProposalResponseSchema,
} from "@evalp/proto/interview/v1/agent";
import { inProgress } from "../agent/command.js";
import { decide, pendingProposal } from "../agent/proposal-commands.js";
import type { Deps } from "../deps.js";
import { runStep, snapshotOfRow } from "../steps.js";

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
