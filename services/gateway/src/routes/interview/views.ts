import type { Evaluation } from "@evalp/proto/interview/v1/evaluation";
import type {
  Entry,
  Metrics,
  OperatorInterview,
  Question,
  Snapshot,
  TranscriptEntry,
} from "@evalp/proto/interview/v1/interview";
import { Type } from "@sinclair/typebox";
import { iso } from "../../http/timestamps.js";
import { DateTime, Uuid } from "../schemas.js";

const FreeObject = Type.Record(Type.String(), Type.Unknown());

/** Wire messages always carry their required parts; a missing one is an upstream bug. */
function required<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`upstream returned no ${what}`);
  return value;
}

export const EvaluationBody = Type.Object(
  {
    id: Uuid,
    environment_id: Uuid,
    subject_id: Uuid,
    bundle_id: Uuid,
    program_id: Type.Union([Uuid, Type.Null()]),
    status: Type.String({
      description: "`pending` until the participant starts, then the interview's status",
    }),
    created_at: DateTime,
  },
  { title: "Evaluation" },
);

export function evaluationJson(evaluation: Evaluation | undefined) {
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

const QuestionBody = Type.Object({
  id: Type.String(),
  prompt: Type.String(),
  input: Type.String(),
  options: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
  required: Type.Boolean(),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
});

function questionJson(question: Question) {
  return {
    id: question.id,
    prompt: question.prompt,
    input: question.input,
    options: question.options.map((option) => ({ id: option.id, label: option.label })),
    required: question.required,
    ...(question.min === undefined ? {} : { min: question.min }),
    ...(question.max === undefined ? {} : { max: question.max }),
  };
}

/** The participant's view of the interview (the start result's `interview`). */
export const SnapshotBody = Type.Object(
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
    question: Type.Optional(QuestionBody),
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
    pending_proposal: Type.Optional(
      Type.Object(
        {
          id: Uuid,
          kind: Type.String(),
          confirmation_text: Type.String(),
          created_at: DateTime,
          question: QuestionBody,
          previous_answer: Type.Optional(FreeObject),
          proposed_answer: Type.Optional(FreeObject),
        },
        { title: "Proposal" },
      ),
    ),
    scenario: Type.Optional(
      Type.Object(
        {
          id: Type.String(),
          prompt: Type.String(),
          framing: Type.String(),
          follow_ups_used: Type.Integer(),
          follow_ups_remaining: Type.Integer(),
          max_follow_ups: Type.Integer(),
          criteria: Type.Array(Type.Object({ id: Type.String(), label: Type.String() })),
        },
        { title: "Scenario" },
      ),
    ),
  },
  { title: "ParticipantInterview" },
);

export function snapshotJson(snapshot: Snapshot | undefined) {
  const s = required(snapshot, "interview");
  const section = s.section;
  return {
    available: s.available,
    consented: s.consented,
    status: s.status,
    agent_connected: s.agentConnected,
    attempt: s.attempt,
    ...(s.interviewId === undefined ? {} : { interview_id: s.interviewId }),
    ...(s.itemKind === undefined ? {} : { item_kind: s.itemKind }),
    ...(s.itemText === undefined ? {} : { item_text: s.itemText }),
    missing: s.missing.map((item) => ({
      id: item.id,
      kind: item.kind,
      label: item.label,
      section_id: item.sectionId,
    })),
    ...(s.pausedReason === undefined ? {} : { paused_reason: s.pausedReason }),
    progress: s.progress,
    ...(s.question ? { question: questionJson(s.question) } : {}),
    ready_to_finish: s.readyToFinish,
    revision: s.revision,
    ...(section
      ? {
          section: {
            id: section.id,
            title: section.title,
            position: section.position,
            total: section.total,
            count: section.count,
            answered: section.answered,
            ...(section.description === undefined ? {} : { description: section.description }),
          },
        }
      : {}),
    ...(s.targetMinutesMin === undefined ? {} : { target_minutes_min: s.targetMinutesMin }),
    ...(s.targetMinutesMax === undefined ? {} : { target_minutes_max: s.targetMinutesMax }),
    ...(s.unavailableReason === undefined ? {} : { unavailable_reason: s.unavailableReason }),
    ...(s.pendingProposal ? { pending_proposal: s.pendingProposal } : {}),
    ...(s.scenario ? { scenario: s.scenario } : {}),
  };
}

/** `{"interview": <snapshot>}`: what consent, answers and finish answer. */
export const SnapshotEnvelope = Type.Object(
  { interview: SnapshotBody },
  { title: "ParticipantInterviewState" },
);

export const TranscriptEntryBody = Type.Object(
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
  { title: "TranscriptEntry" },
);

export function transcriptJson(entry: TranscriptEntry | undefined) {
  const t = required(entry, "transcript entry");
  return {
    entry_id: t.entryId,
    seq: Number(t.seq),
    speaker: t.speaker,
    modality: t.modality,
    text: t.text,
    started_at: iso(t.startedAt),
    ...(t.endedAt ? { ended_at: iso(t.endedAt) } : {}),
    interrupted: t.interrupted,
  };
}

export const EntryBody = Type.Object({
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
});

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
    ...(entry.questionId === undefined ? {} : { question_id: entry.questionId }),
    ...(entry.refEntryId === undefined ? {} : { ref_entry_id: entry.refEntryId }),
    ...(entry.scenarioId === undefined ? {} : { scenario_id: entry.scenarioId }),
    ...(entry.sectionId === undefined ? {} : { section_id: entry.sectionId }),
  };
}

const COUNTS = [
  "attempts",
  "clarifications",
  "consistency_follow_ups",
  "corrections",
  "duration_seconds",
  "rejected_proposals",
  "scenario_evidence",
  "scenario_gaps",
] as const;

const MetricsBody = Type.Object({
  ...Object.fromEntries(COUNTS.map((name) => [name, Type.Integer()])),
  provider_errors: FreeObject,
  usage: FreeObject,
  api_latency_p95_ms: Type.Optional(Type.Number()),
  estimated_cost_usd: Type.Optional(Type.Number()),
  turn_latency_p50_ms: Type.Optional(Type.Number()),
  turn_latency_p95_ms: Type.Optional(Type.Number()),
});

function metricsJson(m: Metrics | undefined) {
  const metrics = required(m, "metrics");
  const optional = {
    api_latency_p95_ms: metrics.apiLatencyP95Ms,
    estimated_cost_usd: metrics.estimatedCostUsd,
    turn_latency_p50_ms: metrics.turnLatencyP50Ms,
    turn_latency_p95_ms: metrics.turnLatencyP95Ms,
  };
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
    ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
  };
}

/** #15: the interface's "Evaluation interview (operator view)". */
export const OperatorInterviewBody = Type.Object(
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
    entries: Type.Array(EntryBody),
    metrics: MetricsBody,
  },
  { title: "EvaluationInterview" },
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
    ...(i.completedAt ? { completed_at: iso(i.completedAt) } : {}),
    ...(i.endedReason === undefined ? {} : { ended_reason: i.endedReason }),
    ...(i.pausedReason === undefined ? {} : { paused_reason: i.pausedReason }),
    next_after_seq: Number(i.nextAfterSeq),
    entries: i.entries.map(entryJson),
    metrics: metricsJson(i.metrics),
  };
}

/** `after_seq` and `limit` of interview and transcript pages (contract §5). */
export const SeqPageQuery = Type.Object({
  after_seq: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100 })),
});
