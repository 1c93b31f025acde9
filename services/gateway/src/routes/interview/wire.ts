import { create, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import {
  type AgentPrice as AgentPriceMessage,
  AgentRefSchema,
  type CreateAgentSessionResponse,
  type RunCommandResponse,
} from "@evalp/proto/interview/v1/agent";
import type { GetSummaryResponse } from "@evalp/proto/interview/v1/analytics";
import type { EvaluationResult as EvaluationResultMessage } from "@evalp/proto/interview/v1/evaluation";
import type {
  Question as QuestionMessage,
  Snapshot,
  TranscriptEntry as TranscriptEntryMessage,
} from "@evalp/proto/interview/v1/interview";
import { type Connection, ParticipantRefSchema } from "@evalp/proto/interview/v1/participant";
import { type Static, Type } from "@sinclair/typebox";
import type { FastifyRequest } from "fastify";
import { iso } from "../../http/timestamps.js";
import { type EnvPath, environmentRef, required, wireOf } from "../wire.js";
import {
  BehavioralEvent,
  Evaluation,
  EvaluationInterview,
  InterviewEntry,
  ListedEvaluation,
  ParticipantSession,
  type Proposal,
  type Scenario,
  type ScoreReport,
  TranscriptEntry,
} from "./wire-schemas.js";

// The interview plane's RPC messages as the API shows them (the schemas of `wire-schemas.ts`). An
// optional field the message lacks is left undefined: the serializer (and a socket's JSON) leaves
// it out.

export const evaluationJson = wireOf(Evaluation);

/** A new participant session but its `url`, which the gateway computes (the plane does not know it). */
export const participantSessionJson = wireOf(Type.Omit(ParticipantSession, ["url"]));

export const behavioralEventJson = wireOf(BehavioralEvent);

function questionJson(question: QuestionMessage) {
  return {
    id: question.id,
    prompt: question.prompt,
    input: question.input,
    options: question.options.map((option) => ({ id: option.id, label: option.label })),
    required: question.required,
    min: question.min,
    max: question.max,
  };
}

export function interviewJson(snapshot: Snapshot | undefined) {
  const s = required(snapshot, "interview");
  const section = s.section;
  return {
    available: s.available,
    consented: s.consented,
    status: s.status,
    agent_connected: s.agentConnected,
    attempt: s.attempt,
    interview_id: s.interviewId,
    item_kind: s.itemKind,
    item_text: s.itemText,
    missing: s.missing.map((item) => ({
      id: item.id,
      kind: item.kind,
      label: item.label,
      section_id: item.sectionId,
    })),
    paused_reason: s.pausedReason,
    progress: s.progress,
    question: s.question && questionJson(s.question),
    ready_to_finish: s.readyToFinish,
    revision: s.revision,
    section: section && {
      id: section.id,
      title: section.title,
      position: section.position,
      total: section.total,
      count: section.count,
      answered: section.answered,
      description: section.description,
    },
    target_minutes_min: s.targetMinutesMin,
    target_minutes_max: s.targetMinutesMax,
    unavailable_reason: s.unavailableReason,
    // The interview plane writes these two as JSON of their schemas' shape.
    pending_proposal: s.pendingProposal as Static<typeof Proposal> | undefined,
    scenario: s.scenario as Static<typeof Scenario> | undefined,
  };
}

export function connectionJson(connection: Connection | undefined) {
  const c = required(connection, "connection");
  return { participant_token: c.participantToken, server_url: c.serverUrl, expires_at: iso(c.expiresAt) };
}

export const transcriptJson = wireOf(TranscriptEntry);

/** A page of a transcript, the participant's or the agent's: its entries and where the next page starts. */
export function transcriptPageJson(answer: { items: TranscriptEntryMessage[]; nextAfterSeq: bigint }) {
  return { items: answer.items.map(transcriptJson), next_after_seq: Number(answer.nextAfterSeq) };
}

export const entryJson = wireOf(InterviewEntry);

/** An evaluation's interview as its operator sees it: its entries and metrics mapped alike. */
export const operatorInterviewJson = wireOf(EvaluationInterview);

export function summaryJson(environmentId: string, startsAt: Date, endsAt: Date, answer: GetSummaryResponse) {
  return {
    environment_id: environmentId,
    starts_at: startsAt.toISOString(),
    ends_at: endsAt.toISOString(),
    sessions_started: Number(answer.sessionsStarted),
    sessions_completed: Number(answer.sessionsCompleted),
    completion_rate: answer.completionRate,
    median_questions: answer.medianQuestions ?? null,
    median_active_ms: answer.medianActiveMs ?? null,
    question_metrics: answer.questionMetrics,
    privacy_floor_applied: answer.privacyFloorApplied,
    axis_metrics: answer.axisMetrics.map(axisMetricJson),
  };
}

const numberOrNull = (value: JsonValue | undefined) => (typeof value === "number" ? value : null);
const fieldsOf = (value: JsonValue | undefined): JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value : {};

/** One axis of the summary's `axis_metrics`, as the plane computed it (docs/results.md#scores-in-analytics). */
function axisMetricJson(metric: JsonObject) {
  const bands = Array.isArray(metric.bands) ? metric.bands : [];
  return {
    axis: String(metric.axis),
    label: String(metric.label),
    scored: Number(metric.scored),
    mean: numberOrNull(metric.mean),
    median: numberOrNull(metric.median),
    bands: bands.map(fieldsOf).map((band) => ({
      band_id: String(band.band_id),
      band_label: String(band.band_label),
      count: Number(band.count),
    })),
  };
}

export function agentSessionJson(answer: CreateAgentSessionResponse) {
  return {
    agent_session_id: answer.agentSessionId,
    agent_token: answer.agentToken,
    server_url: answer.serverUrl,
    expires_at: iso(answer.expiresAt),
    interview_id: answer.interviewId,
  };
}

export function priceJson(price: AgentPriceMessage) {
  return { provider: price.provider, model: price.model, unit: price.unit, usd_per_unit: price.usdPerUnit };
}

/** `{"type":"ack","id","entry"?,"interview"}` (docs/interview.md#the-agent-protocol). */
export function ackJson(id: string, answer: RunCommandResponse) {
  return {
    type: "ack" as const,
    id,
    entry: answer.entry && entryJson(answer.entry),
    interview: interviewJson(answer.interview),
  };
}

export const listedEvaluationJson = wireOf(ListedEvaluation);

/** A result as the API shows it: the report and trace as the plane stored them. */
export function resultJson(message: EvaluationResultMessage | undefined) {
  const result = required(message, "result");
  return {
    evaluation_id: result.evaluationId,
    subject_id: result.subjectId,
    bundle_id: result.bundleId,
    fingerprint: result.fingerprint,
    outcome: result.outcome,
    scored_at: iso(result.scoredAt),
    report: (result.report ?? {}) as Static<typeof ScoreReport>,
    trace: result.trace ?? {},
  };
}

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
