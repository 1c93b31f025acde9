import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { INTERVIEW } from "./prose.js";
import { participantRef } from "./requests.js";
import { INTERVIEW_STEP, step } from "./steps.js";

/**
 * `/v1/participant/interview/proposals/{id}/confirm|reject` (docs/interview.md#the-agent-protocol): the participant's
 * decision on the answer an agent proposed.
 */
export function proposalRoutes(app: Api<"/v1/participant">, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;

  route(app, INTERVIEW, {
    id: "confirmProposal",
    path: "/interview/proposals/:proposal_id/confirm",
    ...INTERVIEW_STEP,
    handler: async ({ request, call }) =>
      step(
        deps.hub,
        request,
        await agent.resolveProposal(
          {
            participant: participantRef(request),
            proposalId: request.params.proposal_id,
            decision: "confirm",
          },
          call,
        ),
      ),
  });

  route(app, INTERVIEW, {
    id: "rejectProposal",
    path: "/interview/proposals/:proposal_id/reject",
    ...INTERVIEW_STEP,
    body: Type.Object(
      { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
      { additionalProperties: false },
    ),
    handler: async ({ request, call }) =>
      step(
        deps.hub,
        request,
        await agent.resolveProposal(
          {
            participant: participantRef(request),
            proposalId: request.params.proposal_id,
            decision: "reject",
            reason: request.body.reason,
          },
          call,
        ),
      ),
  });
}
