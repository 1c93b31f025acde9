import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type Call, route } from "../index.js";
import type { InterviewApi } from "./index.js";
import { INTERVIEW_STEP, STEP, step } from "./steps.js";
import { participantRef } from "./wire.js";

/**
 * `/v1/participant/interview/proposals/{id}/confirm|reject` (docs/interview.md#the-agent-protocol): the participant's
 * decision on the answer an agent proposed.
 */
export function proposalRoutes(app: InterviewApi<"/v1/participant">, deps: RouteDeps): void {
  const agent = deps.upstreams.interview.agent;

  /** Resolves the proposal of the request's path as the participant decided: an interview step. */
  const decide = async (
    request: FastifyRequest<{ Params: { proposal_id: string } }>,
    call: Call,
    decision: { decision: "confirm" } | { decision: "reject"; reason: string | undefined },
  ) => {
    const proposal = { participant: participantRef(request), proposalId: request.params.proposal_id };
    return step(deps.hub, request, await agent.resolveProposal({ ...proposal, ...decision }, call));
  };

  route(app, "confirmProposal", "POST /interview/proposals/:proposal_id/confirm", STEP, {
    ...INTERVIEW_STEP,
    handler: ({ request, call }) => decide(request, call, { decision: "confirm" }),
  });

  route(app, "rejectProposal", "POST /interview/proposals/:proposal_id/reject", STEP, {
    ...INTERVIEW_STEP,
    body: Type.Object(
      { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
      { additionalProperties: false },
    ),
    handler: ({ request, call }) =>
      decide(request, call, { decision: "reject", reason: request.body.reason }),
  });
}
