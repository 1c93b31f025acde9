import { create } from "@bufbuild/protobuf";
import { AgentRefSchema } from "@evalp/proto/interview/v1/agent";
import { ParticipantRefSchema } from "@evalp/proto/interview/v1/participant";
import { Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { type EnvPath, environmentRef } from "../environment.js";

// What the interview plane's requests carry: their shared parameters, and the interview a
// verified participant or agent token is bound to.

/** Path parameters of `ENV/evaluations/:evaluation_id/…`. */
export type EvaluationPath = EnvPath & { evaluation_id: string };

/** An evaluation as the interview plane's RPCs name it: its environment's path and its id. */
export function evaluationRef(params: EvaluationPath) {
  return { environment: environmentRef(params), evaluationId: params.evaluation_id };
}

/** The body of a new participant or agent session: its lifetime, 900 seconds unless given. */
export function SessionBody(maxSeconds: number) {
  return Type.Object(
    { ttl_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: maxSeconds, default: 900 })) },
    { additionalProperties: false },
  );
}

/** What a new session of an evaluation is asked for: the evaluation and the session's lifetime. */
export function sessionRequest(request: { params: EvaluationPath; body: { ttl_seconds?: number } }) {
  return { ...evaluationRef(request.params), ttlSeconds: request.body.ttl_seconds ?? 900 };
}

/** `after_seq` and `limit` of interview and transcript pages (docs/paging.md). */
export const SeqPageQuery = Type.Object({
  after_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});

/** The page a `SeqPageQuery` asks for, as the transcript RPCs take it. */
export function seqPage(query: { after_seq?: number; limit?: number }) {
  return { afterSeq: BigInt(query.after_seq ?? 0), limit: query.limit ?? 100 };
}

/** Texts and names of what participants and agents send. */
export const Text = Type.String({ minLength: 1, maxLength: 10_000 });
export const Name = Type.String({ minLength: 1, maxLength: 255 });

/** The session the request's verified participant token is bound to. */
export function participantRef(request: FastifyRequest) {
  const participant = request.participant;
  if (!participant) throw new Error("participant route without a verified participant");
  return create(ParticipantRefSchema, {
    sessionId: participant.sessionId,
    evaluationId: participant.evaluationId,
  });
}

/** The agent session a request's verified agent token is bound to. */
export function agentRef(request: FastifyRequest) {
  const agent = request.agent;
  if (!agent) throw new Error("agent route without a verified agent");
  return create(AgentRefSchema, { agentSessionId: agent.sessionId, evaluationId: agent.evaluationId });
}
