import type { AgentRef } from "@evalp/proto/interview/v1/agent";
import type { ParticipantRef } from "@evalp/proto/interview/v1/participant";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { EnvParams } from "../schemas.js";

// What the interview plane's requests carry: their shared parameters, and the interview a
// verified participant or agent token is bound to.

/** Path parameters of `ENV/evaluations/:evaluation_id/…`. */
export const EvaluationParams = Type.Composite([EnvParams, Type.Object({ evaluation_id: Type.String() })]);

/** `after_seq` and `limit` of interview and transcript pages (contract §5). */
export const SeqPageQuery = Type.Object({
  after_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

/** Texts and names of what participants and agents send. */
export const Text = Type.String({ minLength: 1, maxLength: 10_000 });
export const Name = Type.String({ minLength: 1, maxLength: 255 });

/** The session the request's verified participant token is bound to. */
export function participantRef(request: FastifyRequest): ParticipantRef {
  const participant = request.participant;
  if (!participant) throw new Error("participant route without a verified participant");
  return { sessionId: participant.sessionId, evaluationId: participant.evaluationId } as ParticipantRef;
}

/** The agent session a request's verified agent token is bound to. */
export function agentRef(request: FastifyRequest): AgentRef {
  const agent = request.agent;
  if (!agent) throw new Error("agent route without a verified agent");
  return { agentSessionId: agent.sessionId, evaluationId: agent.evaluationId } as AgentRef;
}
