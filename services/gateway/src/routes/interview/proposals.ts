import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import type { RouteDeps } from "../deps.js";
import { type Api, type Call, route } from "../index.js";
import { INTERVIEW } from "./index.js";
import { INTERVIEW_STEP, step } from "./steps.js";
import { participantRef } from "./wire.js";

/**
 * `/v1/participant/interview/proposals/{id}/confirm|reject` (docs/interview.md#the-agent-protocol): the participant's
 * decision on the answer an agent proposed.
 */
export function proposalRoutes(app: Api<"/v1/participant">, deps: RouteDeps): void {
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

  route(app, INTERVIEW, {
    id: "confirmProposal",
    path: "/interview/proposals/:proposal_id/confirm",
    ...INTERVIEW_STEP,
    handler: ({ request, call }) => decide(request, call, { decision: "confirm" }),
  });

  route(app, INTERVIEW, {
    id: "rejectProposal",
    path: "/interview/proposals/:proposal_id/reject",
    ...INTERVIEW_STEP,
    body: Type.Object(
      { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })) },
      { additionalProperties: false },
    ),
    handler: ({ request, call }) =>
      decide(request, call, { decision: "reject", reason: request.body.reason }),
  });
}
