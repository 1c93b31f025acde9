import type {
  AgentPrice as AgentPriceMessage,
  CreateAgentSessionResponse,
  RunCommandResponse,
} from "@evalp/proto/interview/v1/agent";
import type { GetSummaryResponse } from "@evalp/proto/interview/v1/analytics";
import type {
  BehavioralEvent as BehavioralEventMessage,
  CreateParticipantSessionResponse,
  Evaluation as EvaluationMessage,
} from "@evalp/proto/interview/v1/evaluation";
import type {
  Entry,
  Metrics,
  OperatorInterview,
  Question as QuestionMessage,
  Snapshot,
  TranscriptEntry as TranscriptEntryMessage,
} from "@evalp/proto/interview/v1/interview";
import type { Connection } from "@evalp/proto/interview/v1/participant";
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { iso } from "../../http/timestamps.js";
import { DateTime, ref, Uuid } from "../schemas.js";

// The interview plane's resources on the wire: their schemas (named components of the document)
// and the mappers from the RPC messages. An optional field the message lacks is left undefined:
// the serializer (and a socket's JSON) leaves it out.

const FreeObject = Type.Record(Type.String(), Type.Unknown());
const nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** Wire messages always carry their required parts; a missing one is an upstream bug. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`upstream returned no ${what}`);
  return value;
}

export const Evaluation = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    subject_id: Uuid,
    bundle_id: Uuid,
    program_id: nullable(Uuid),
    status: Type.String({
      description: "`pending` until the participant starts, then the interview's status",
    }),
    created_at: DateTime,
  },
  { $id: "Evaluation", title: "Evaluation", description: "An evaluation of a subject on a bundle." },
);

export function evaluationJson(evaluation: EvaluationMessage | undefined) {
  const e = required(evaluation, "evaluation");
  return {
    id: e.id,
    environment_id: e.environmentId,
    subject_id: e.subjectId,
    bundle_id: e.bundleId,
    program_id: e.programId ?? null,
    status: e.status,
    created_at: iso(e.createdAt),
  };
}

export const ParticipantSession = Type.Object(
  { session_id: Uuid, participant_token: Type.String(), expires_at: DateTime },
  {
    $id: "ParticipantSession",
    title: "ParticipantSession",
    description: "A participant session of an evaluation; its participant token is shown this once.",
  },
);

export function participantSessionJson(answer: CreateParticipantSessionResponse) {
  return {
    session_id: answer.sessionId,
    participant_token: answer.participantToken,
    expires_at: iso(answer.expiresAt),
  };
}

export const BehavioralEvent = Type.Object(
  {
    type: Type.String(),
    occurred_at: DateTime,
    question_id: nullable(Type.String()),
    elapsed_ms: nullable(Type.Number()),
  },
  {
    $id: "BehavioralEvent",
    title: "BehavioralEvent",
    description: "A participant's behavioral event (privacy-minimized).",
  },
);

export function behavioralEventJson(event: BehavioralEventMessage) {
  return {
    type: event.type,
    occurred_at: iso(event.occurredAt),
    question_id: event.questionId ?? null,
    elapsed_ms: event.elapsedMs ?? null,
  };
}

export const BehavioralEventReceipt = Type.Object(
  { accepted: Type.Integer() },
  {
    $id: "BehavioralEventReceipt",
    title: "BehavioralEventReceipt",
    description: "How many events were recorded.",
  },
);

export const Question = Type.Object(
  {
    id: Type.String(),
    prompt: Type.String(),
    input: Type.String(),
    options: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
    required: Type.Boolean(),
    min: Type.Optional(Type.Number()),
    max: Type.Optional(Type.Number()),
  },
  { $id: "Question", title: "Question", description: "A question of the interview, as it is asked." },
);

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

export const Proposal = Type.Object(
  {
    id: Uuid,
    kind: Type.String(),
    confirmation_text: Type.String(),
    created_at: DateTime,
    question: ref(Question),
    previous_answer: Type.Optional(FreeObject),
    proposed_answer: Type.Optional(FreeObject),
  },
  {
    $id: "Proposal",
    title: "Proposal",
    description: "An answer the agent proposes, for the participant to confirm or reject.",
  },
);

export const Scenario = Type.Object(
  {
    id: Type.String(),
    prompt: Type.String(),
    framing: Type.String(),
    follow_ups_used: Type.Integer(),
    follow_ups_remaining: Type.Integer(),
    max_follow_ups: Type.Integer(),
    criteria: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
  },
  { $id: "Scenario", title: "Scenario", description: "The scenario being explored, and its follow-ups." },
);

/** The interview's state as both sides see it (contract §9): the `interview` of every step. */
export const Interview = Type.Object(
  {
    available: Type.Boolean(),
    consented: Type.Boolean(),
    status: Type.String(),
    agent_connected: Type.Boolean(),
    attempt: Type.Integer(),
    interview_id: Type.Optional(Uuid),
    item_kind: Type.Optional(Type.String()),
    item_text: Type.Optional(Type.String()),
    missing: Type.Array(
      Type.Object({
        id: Type.String(),
        kind: Type.String(),
        label: Type.String(),
        section_id: Type.String(),
      }),
    ),
    paused_reason: Type.Optional(Type.String()),
    progress: Type.Number(),
    question: Type.Optional(ref(Question)),
    ready_to_finish: Type.Boolean(),
    revision: Type.Integer(),
    section: Type.Optional(
      Type.Object({
        id: Type.String(),
        title: Type.String(),
        position: Type.Integer(),
        total: Type.Integer(),
        count: Type.Integer(),
        answered: Type.Integer(),
        description: Type.Optional(Type.String()),
      }),
    ),
    target_minutes_min: Type.Optional(Type.Integer()),
    target_minutes_max: Type.Optional(Type.Integer()),
    unavailable_reason: Type.Optional(Type.String()),
    pending_proposal: Type.Optional(ref(Proposal)),
    scenario: Type.Optional(ref(Scenario)),
  },
  {
    $id: "ParticipantInterview",
    title: "ParticipantInterview",
    description: "The interview's state: where it stands, the question asked, progress and what is missing.",
  },
);

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

/** `{"interview": …}`: what consent, answers, finish and a proposal's decision answer. */
export const InterviewState = Type.Object(
  { interview: ref(Interview) },
  {
    $id: "ParticipantInterviewState",
    title: "ParticipantInterviewState",
    description: "The interview after a step.",
  },
);

export const InterviewStart = Type.Object(
  {
    connection: Type.Object({
      participant_token: Type.String(),
      server_url: Type.String(),
      expires_at: DateTime,
    }),
    interview: ref(Interview),
  },
  {
    $id: "ParticipantInterviewStart",
    title: "ParticipantInterviewStart",
    description: "The interview, started or resumed, and a connection token for the realtime door.",
  },
);

export function connectionJson(connection: Connection | undefined) {
  const c = required(connection, "connection");
  return { participant_token: c.participantToken, server_url: c.serverUrl, expires_at: iso(c.expiresAt) };
}

export const TranscriptEntry = Type.Object(
  {
    entry_id: Uuid,
    seq: Type.Integer(),
    speaker: Type.String(),
    modality: Type.String(),
    text: Type.String(),
    started_at: DateTime,
    ended_at: Type.Optional(DateTime),
    interrupted: Type.Boolean(),
  },
  { $id: "TranscriptEntry", title: "TranscriptEntry", description: "A question, an answer or an utterance." },
);

export function transcriptJson(entry: TranscriptEntryMessage | undefined) {
  const t = required(entry, "transcript entry");
  return {
    entry_id: t.entryId,
    seq: Number(t.seq),
    speaker: t.speaker,
    modality: t.modality,
    text: t.text,
    started_at: iso(t.startedAt),
    ended_at: t.endedAt && iso(t.endedAt),
    interrupted: t.interrupted,
  };
}

export const TranscriptPage = Type.Object(
  { items: Type.Array(ref(TranscriptEntry)), next_after_seq: Type.Integer() },
  {
    $id: "TranscriptPage",
    title: "TranscriptPage",
    description: "Transcript entries after a sequence number.",
  },
);

export const InterviewEntry = Type.Object(
  {
    id: Uuid,
    seq: Type.Integer(),
    kind: Type.String(),
    actor: Type.String(),
    attempt: Type.Integer(),
    occurred_at: DateTime,
    received_at: DateTime,
    payload: FreeObject,
    question_id: Type.Optional(Type.String()),
    ref_entry_id: Type.Optional(Uuid),
    scenario_id: Type.Optional(Type.String()),
    section_id: Type.Optional(Type.String()),
  },
  {
    $id: "InterviewEntry",
    title: "InterviewEntry",
    description: "An entry of the interview's record, in order.",
  },
);

export function entryJson(entry: Entry) {
  return {
    id: entry.id,
    seq: Number(entry.seq),
    kind: entry.kind,
    actor: entry.actor,
    attempt: entry.attempt,
    occurred_at: iso(entry.occurredAt),
    received_at: iso(entry.receivedAt),
    payload: entry.payload ?? {},
    question_id: entry.questionId,
    ref_entry_id: entry.refEntryId,
    scenario_id: entry.scenarioId,
    section_id: entry.sectionId,
  };
}

export const InterviewMetrics = Type.Object(
  {
    attempts: Type.Integer(),
    clarifications: Type.Integer(),
    consistency_follow_ups: Type.Integer(),
    corrections: Type.Integer(),
    duration_seconds: Type.Integer(),
    rejected_proposals: Type.Integer(),
    scenario_evidence: Type.Integer(),
    scenario_gaps: Type.Integer(),
    provider_errors: FreeObject,
    usage: FreeObject,
    api_latency_p95_ms: Type.Optional(Type.Number()),
    estimated_cost_usd: Type.Optional(Type.Number()),
    turn_latency_p50_ms: Type.Optional(Type.Number()),
    turn_latency_p95_ms: Type.Optional(Type.Number()),
  },
  {
    $id: "InterviewMetrics",
    title: "InterviewMetrics",
    description: "What the interview took: counts, usage, latency and cost.",
  },
);

function metricsJson(m: Metrics | undefined) {
  const metrics = required(m, "metrics");
  return {
    attempts: Number(metrics.attempts),
    clarifications: Number(metrics.clarifications),
    consistency_follow_ups: Number(metrics.consistencyFollowUps),
    corrections: Number(metrics.corrections),
    duration_seconds: Number(metrics.durationSeconds),
    rejected_proposals: Number(metrics.rejectedProposals),
    scenario_evidence: Number(metrics.scenarioEvidence),
    scenario_gaps: Number(metrics.scenarioGaps),
    provider_errors: metrics.providerErrors ?? {},
    usage: metrics.usage ?? {},
    api_latency_p95_ms: metrics.apiLatencyP95Ms,
    estimated_cost_usd: metrics.estimatedCostUsd,
    turn_latency_p50_ms: metrics.turnLatencyP50Ms,
    turn_latency_p95_ms: metrics.turnLatencyP95Ms,
  };
}

/** The interface's "Evaluation interview (operator view)". */
export const EvaluationInterview = Type.Object(
  {
    interview_id: Uuid,
    evaluation_id: Uuid,
    version_bundle_id: Uuid,
    config_fingerprint: Type.String(),
    status: Type.String(),
    started_at: DateTime,
    last_activity_at: DateTime,
    completed_at: Type.Optional(DateTime),
    ended_reason: Type.Optional(Type.String()),
    paused_reason: Type.Optional(Type.String()),
    next_after_seq: Type.Integer(),
    entries: Type.Array(ref(InterviewEntry)),
    metrics: ref(InterviewMetrics),
  },
  {
    $id: "EvaluationInterview",
    title: "EvaluationInterview",
    description: "An evaluation's interview as its operator sees it.",
  },
);

export function operatorInterviewJson(interview: OperatorInterview | undefined) {
  const i = required(interview, "interview");
  return {
    interview_id: i.interviewId,
    evaluation_id: i.evaluationId,
    version_bundle_id: i.versionBundleId,
    config_fingerprint: i.configFingerprint,
    status: i.status,
    started_at: iso(i.startedAt),
    last_activity_at: iso(i.lastActivityAt),
    completed_at: i.completedAt && iso(i.completedAt),
    ended_reason: i.endedReason,
    paused_reason: i.pausedReason,
    next_after_seq: Number(i.nextAfterSeq),
    entries: i.entries.map(entryJson),
    metrics: metricsJson(i.metrics),
  };
}

export const AnalyticsSummary = Type.Object(
  {
    environment_id: Uuid,
    starts_at: DateTime,
    ends_at: DateTime,
    sessions_started: Type.Integer(),
    sessions_completed: Type.Integer(),
    completion_rate: Type.Number(),
    median_questions: nullable(Type.Number()),
    median_active_ms: nullable(Type.Number()),
    question_metrics: Type.Array(FreeObject),
    privacy_floor_applied: Type.Boolean(),
  },
  {
    $id: "AnalyticsSummary",
    title: "AnalyticsSummary",
    description: "The interviews started in a window, summed up.",
  },
);

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
  };
}

export const AgentSession = Type.Object(
  {
    agent_session_id: Uuid,
    agent_token: Type.String(),
    server_url: Type.String(),
    expires_at: DateTime,
    interview_id: Uuid,
  },
  {
    $id: "AgentSession",
    title: "AgentSession",
    description: "An agent session on an interview; its agent token is shown this once.",
  },
);

export function agentSessionJson(answer: CreateAgentSessionResponse) {
  return {
    agent_session_id: answer.agentSessionId,
    agent_token: answer.agentToken,
    server_url: answer.serverUrl,
    expires_at: iso(answer.expiresAt),
    interview_id: answer.interviewId,
  };
}

export const AgentPrice = Type.Object(
  { provider: Type.String(), model: Type.String(), unit: Type.String(), usd_per_unit: Type.Number() },
  { $id: "AgentPrice", title: "AgentPrice", description: "The price of a unit of a provider's model." },
);

export const AgentPrices = Type.Object(
  { prices: Type.Array(ref(AgentPrice)), updated_at: DateTime },
  { $id: "AgentPrices", title: "AgentPrices", description: "The environment's agent price table." },
);

export function priceJson(price: AgentPriceMessage) {
  return { provider: price.provider, model: price.model, unit: price.unit, usd_per_unit: price.usdPerUnit };
}

export const AgentAck = Type.Object(
  {
    type: Type.Literal("ack"),
    id: Type.String(),
    entry: Type.Optional(ref(InterviewEntry)),
    interview: ref(Interview),
  },
  {
    $id: "AgentAck",
    title: "AgentAck",
    description: "A command's acknowledgement: its entry, if any, and the interview after it.",
  },
);

/** `{"type":"ack","id","entry"?,"interview"}` (contract §9). */
export function ackJson(id: string, answer: RunCommandResponse) {
  return {
    type: "ack" as const,
    id,
    entry: answer.entry && entryJson(answer.entry),
    interview: interviewJson(answer.interview),
  };
}

/** The named schemas of this plane, registered once with the app (components of the document). */
export const INTERVIEW_SCHEMAS = [
  Evaluation,
  ParticipantSession,
  BehavioralEvent,
  BehavioralEventReceipt,
  Question,
  Proposal,
  Scenario,
  Interview,
  InterviewState,
  InterviewStart,
  TranscriptEntry,
  TranscriptPage,
  InterviewEntry,
  InterviewMetrics,
  EvaluationInterview,
  AnalyticsSummary,
  AgentSession,
  AgentPrice,
  AgentPrices,
  AgentAck,
];
