import { Type } from "@sinclair/typebox";
import type { RouteDeps } from "../deps.js";
import { type Api, route } from "../route.js";
import { OptionalIdempotencyHeaders, ref } from "../schemas.js";
import { STEP, STEP_ERRORS, stepState } from "./participant.js";
import { participantRef } from "./requests.js";
import { InterviewState } from "./wire.js";

const ProposalParams = Type.Object({ proposal_id: Type.String() });

/**
 * `/v1/participant/interview/proposals/{id}/confirm|reject` (contract §9): the participant's
 * decision on the answer an agent proposed.
 */
export function proposalRoutes(app: Api, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;

  route(app, "interview", {
    method: "POST",
    url: "/interview/proposals/:proposal_id/confirm",
    operationId: "confirmProposal",
    summary: "Confirm the pending proposal",
    description:
      "Confirms the answer the agent proposed: it is recorded (a correction when the question was " +
      "answered already). An Idempotency-Key is honoured when sent.",
    access: STEP,
    params: ProposalParams,
    headers: OptionalIdempotencyHeaders,
    response: ref(InterviewState),
    responseDescription: "The interview with the answer recorded.",
    errors: STEP_ERRORS,
    handler: async ({ request, call }) => {
      const answer = await agent.resolveProposal(
        { participant: participantRef(request), proposalId: request.params.proposal_id, decision: "confirm" },
        call,
      );
      return stepState(deps.hub, request, answer.interview);
    },
  });

  route(app, "interview", {
    method: "POST",
    url: "/interview/proposals/:proposal_id/reject",
    operationId: "rejectProposal",
    summary: "Reject the pending proposal",
    description:
      "Rejects the answer the agent proposed, with an optional reason: the question's `attempt` goes " +
      "up by one and it is asked again. An Idempotency-Key is honoured when sent.",
    access: STEP,
    params: ProposalParams,
    headers: OptionalIdempotencyHeaders,
    body: Type.Object(
      { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
      { additionalProperties: false },
    ),
    response: ref(InterviewState),
    responseDescription: "The interview with the proposal rejected.",
    errors: STEP_ERRORS,
    handler: async ({ request, call }) => {
      const answer = await agent.resolveProposal(
        {
          participant: participantRef(request),
          proposalId: request.params.proposal_id,
          decision: "reject",
          reason: request.body.reason,
        },
        call,
      );
      return stepState(deps.hub, request, answer.interview);
    },
  });
}
