import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import type { Api } from "../route.js";
import { participantRef } from "./requests.js";
import { interviewStep } from "./steps.js";

/**
 * `/v1/participant/interview/proposals/{id}/confirm|reject` (docs/interview.md#the-agent-protocol): the participant's
 * decision on the answer an agent proposed.
 */
export function proposalRoutes(app: Api<"/v1/participant">, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;

  interviewStep(app, deps.hub, "confirmProposal", "/interview/proposals/:proposal_id/confirm", {
    take: ({ request, call }) =>
      agent.resolveProposal(
        { participant: participantRef(request), proposalId: request.params.proposal_id, decision: "confirm" },
        call,
      ),
  });

  interviewStep(app, deps.hub, "rejectProposal", "/interview/proposals/:proposal_id/reject", {
    body: Type.Object(
      { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
      { additionalProperties: false },
    ),
    take: ({ request, call }) =>
      agent.resolveProposal(
        {
          participant: participantRef(request),
          proposalId: request.params.proposal_id,
          decision: "reject",
          reason: request.body.reason,
        },
        call,
      ),
  });
}
